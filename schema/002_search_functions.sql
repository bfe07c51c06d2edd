-- The hot retrieval path as PL/pgSQL functions, so that a search is one statement
-- (chatctx_candidates) instead of five, each plan is made once per session and
-- reused (for the keyword query, planning cost as much as running it), and the query
-- vector is parsed once or not at all (on PGlite, parsing a 512-dimension literal
-- costs more than the nearest-neighbour search). The vector search raises
-- hnsw.ef_search for itself, where it used to need a transaction held open across
-- several round trips. The arithmetic constants are parameters, so they stay
-- defined once, in the code that calls these (lambdas/retrieval/candidate-search.ts).

-- Okapi BM25 over record_terms, OR semantics; see candidate-search.ts. One row per
-- hit, or one row with a null id when nothing matched (query_idf is still reported).
CREATE OR REPLACE FUNCTION chatctx_keyword_search(
  p_query text, p_technologies jsonb, p_limit int, p_k1 float8, p_b float8, p_absent_weight float8)
RETURNS TABLE (id text, score float8, matched_idf float8, candidates int, query_idf float8)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH q AS (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', p_query)) u),
       s AS (SELECT c.n::float8 AS n, CASE WHEN c.n > 0 THEN c.total_len / c.n ELSE 1 END AS avgdl FROM corpus_stats c WHERE c.id = 1),
       qt AS (SELECT q.lexeme, coalesce(t.df, 0) AS df,
                     ln(1 + (s.n - coalesce(t.df, 0) + 0.5) / (coalesce(t.df, 0) + 0.5)) AS idf
                FROM q CROSS JOIN s LEFT JOIN term_stats t USING (lexeme)),
       -- One index range scan of record_terms per query lexeme (OFFSET 0 keeps the
       -- planner from turning it into a hash join over the whole table).
       scored AS (
         SELECT rt.record_id,
                sum(qt.idf * rt.tf * (p_k1 + 1) / (rt.tf + p_k1 * (1 - p_b + p_b * rt.doc_len / s.avgdl))) AS score,
                sum(qt.idf) AS matched_idf
           FROM qt CROSS JOIN s
                CROSS JOIN LATERAL (SELECT r.record_id, r.tf, r.doc_len FROM record_terms r WHERE r.lexeme = qt.lexeme OFFSET 0) rt
          WHERE p_technologies IS NULL OR rt.record_id IN (
                  SELECT a.record_id FROM record_applies_to a
                   WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text(p_technologies) t))
          GROUP BY rt.record_id),
       top AS (SELECT sc.record_id, sc.score, sc.matched_idf, count(*) OVER () AS candidates
                 FROM scored sc ORDER BY sc.score DESC, sc.record_id LIMIT p_limit)
  SELECT top.record_id::text, top.score::float8, top.matched_idf::float8, top.candidates::int,
         (SELECT coalesce(sum(CASE WHEN qt.df = 0 THEN p_absent_weight * qt.idf ELSE qt.idf END), 0) FROM qt)::float8
    FROM (SELECT 1) one LEFT JOIN top ON true;
END
$fn$;

-- pgvector HNSW (cosine) over record_passages: a record's similarity is its best
-- passage's; see candidate-search.ts.
CREATE OR REPLACE FUNCTION chatctx_vector_search(p_vector vector, p_technologies jsonb, p_passages int, p_limit int)
RETURNS TABLE (id text, similarity float8)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
BEGIN
  -- No vector (the cache entry it named is gone): no dense candidates.
  IF p_vector IS NULL THEN
    RETURN;
  END IF;
  -- HNSW returns at most ef_search rows; raise it for this statement's transaction only.
  PERFORM set_config('hnsw.ef_search', p_passages::text, true);
  -- Planned for the actual limit on every call (EXECUTE): a plan kept for any limit
  -- sorts every passage instead of using the HNSW index (measured on 3,000
  -- passages: 59 ms against a few).
  RETURN QUERY EXECUTE
    'WITH nearest AS (
       SELECT p.record_id, 1 - (p.embedding <=> $1) AS similarity
         FROM record_passages p
        ORDER BY p.embedding <=> $1
        LIMIT $2)
     SELECT n.record_id::text, max(n.similarity)::float8
       FROM nearest n JOIN records r ON r.id = n.record_id
      WHERE r.status = ''approved''
        AND ($3::jsonb IS NULL OR n.record_id IN (
              SELECT a.record_id FROM record_applies_to a
               WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($3::jsonb) t)))
      GROUP BY n.record_id
      ORDER BY 2 DESC, 1
      LIMIT $4'
    USING p_vector, p_passages, p_technologies, p_limit;
END
$fn$;

-- Everything ranking needs for one query, in one statement. The vector is given
-- (p_vector; with p_cache_key it is also stored in embedding_cache, as a newly
-- embedded query is), or read from embedding_cache by p_cache_key (if it is not
-- there, the only row is 'no_vector'), or absent (keyword search only). Rows: 'keyword' hits (or one row with a null id carrying
-- the query's IDF mass), 'dense' hits with their best passage's similarity, and the
-- 'similarity' of keyword hits the dense side did not find.
CREATE OR REPLACE FUNCTION chatctx_candidates(
  p_query text, p_vector vector, p_cache_key text, p_technologies jsonb, p_pool int, p_passages int,
  p_k1 float8, p_b float8, p_absent_weight float8, p_keyword boolean)
RETURNS TABLE (kind text, id text, score float8, matched_idf float8, candidates int, query_idf float8)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  v vector := p_vector;
  used timestamptz;
BEGIN
  IF v IS NOT NULL AND p_cache_key IS NOT NULL THEN
    BEGIN
      INSERT INTO embedding_cache (cache_key, embedding) VALUES (p_cache_key, v) ON CONFLICT (cache_key) DO NOTHING;
    EXCEPTION WHEN OTHERS THEN
      NULL; -- Caching is an optimisation; the answer does not depend on it.
    END;
  ELSIF v IS NULL AND p_cache_key IS NOT NULL THEN
    SELECT c.embedding, c.last_used_at INTO v, used FROM embedding_cache c WHERE c.cache_key = p_cache_key;
    IF v IS NULL THEN
      -- Not cached: one 'no_vector' row, and the caller embeds the query and asks again.
      RETURN QUERY SELECT 'no_vector'::text, NULL::text, NULL::float8, NULL::float8, NULL::int, NULL::float8;
      RETURN;
    END IF;
    -- last_used_at only decides pruning (after 30 days unused): touched at most hourly,
    -- so a repeated question does not write on every call.
    IF used < now() - interval '1 hour' THEN
      UPDATE embedding_cache SET last_used_at = now() WHERE cache_key = p_cache_key;
    END IF;
  END IF;
  RETURN QUERY
  WITH kw AS (SELECT k.* FROM chatctx_keyword_search(p_query, p_technologies, p_pool, p_k1, p_b, p_absent_weight) k WHERE p_keyword),
       dn AS (SELECT d.* FROM chatctx_vector_search(v, p_technologies, p_passages, p_pool) d),
       -- A record among the nearest passages has its best passage there; only keyword
       -- hits outside them need their passages compared (each comparison is costly).
       sims AS (SELECT p.record_id::text AS id, max(1 - (p.embedding <=> v))::float8 AS similarity
                  FROM record_passages p
                 WHERE v IS NOT NULL
                   AND p.record_id IN (SELECT kw.id::uuid FROM kw WHERE kw.id IS NOT NULL AND kw.id NOT IN (SELECT dn.id FROM dn))
                 GROUP BY p.record_id)
  SELECT 'keyword'::text, kw.id, kw.score, kw.matched_idf, kw.candidates, kw.query_idf FROM kw
  UNION ALL SELECT 'dense'::text, dn.id, dn.similarity, NULL::float8, NULL::int, NULL::float8 FROM dn
  UNION ALL SELECT 'similarity'::text, sims.id, sims.similarity, NULL::float8, NULL::int, NULL::float8 FROM sims;
END
$fn$;

-- The corpus generation: one number that every statement changing what a search
-- can return (records, their applicability, sources, passages, index terms) moves
-- on, in the same transaction. A process may keep answers and records in memory and
-- tell they are stale by reading it (lambdas/retrieval/search-cache.ts).
ALTER TABLE corpus_stats ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION chatctx_next_generation() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE corpus_stats SET generation = generation + 1 WHERE id = 1;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE TRIGGER records_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON records
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();
CREATE OR REPLACE TRIGGER record_applies_to_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON record_applies_to
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();
CREATE OR REPLACE TRIGGER record_sources_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON record_sources
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();
CREATE OR REPLACE TRIGGER record_passages_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON record_passages
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();
CREATE OR REPLACE TRIGGER record_terms_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON record_terms
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();
