-- Passage and query vectors stored inside their rows, and the similarity of keyword
-- hits read record by record.
--
-- pgvector gives `vector` EXTERNAL storage, and a 512-dimension vector (2,052 bytes)
-- is just over the size at which Postgres moves a value out of its row, so every
-- vector sat in the TOAST table as two chunks: each distance computed outside the
-- HNSW index (an exact scan, a keyword hit's similarity, the similarity of the
-- passages the index returns) first looked the vector up there. On PGlite a distance
-- then cost about 7.5 microseconds instead of 3 (1,458 starter passages: 10.9 ms
-- against 4.5), and the statement behind a computed answer spent a fifth of its time
-- fetching vectors (docs/testing.md, "A cheaper computed answer").
--
-- PLAIN keeps the vector in the row, uncompressed (vectors do not compress): three
-- passages a page instead of about fifty, which only a full scan of the table reads,
-- and every full scan reads the vectors anyway. A 512-dimension row is far from the
-- 8 kB page limit, as is any width pgvector can index (2,000 dimensions).
ALTER TABLE record_passages ALTER COLUMN embedding SET STORAGE PLAIN;
ALTER TABLE embedding_cache ALTER COLUMN embedding SET STORAGE PLAIN;

-- A new storage setting applies to rows written from now on. Rows already written are
-- rewritten here when there are few enough to do it within a start; a larger store
-- keeps its earlier passages out of line until they are embedded again (it answers
-- the same, only that part of it more slowly). The array round trip is exact: it
-- makes a new value, so the row is written with the new storage, where assigning the
-- column to itself would keep the TOAST pointer.
--
-- The vector indexes are dropped for the rewrite and built again after it: updated in
-- place, each would keep an entry for every old row version, and PGlite has no
-- autovacuum to remove them, so every walk would pass dead entries (a walk without
-- iterative scans, the previous release's function, then found fewer passages). On
-- the starter corpus's 1,458 passages: the rewrite 0.2 s, each index 1.4 s on PGlite,
-- once. The definitions are 001's and 013's.
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM record_passages LIMIT 5001) s) <= 5000 THEN
    DROP INDEX IF EXISTS record_passages_embedding_idx;
    DROP INDEX IF EXISTS record_passages_public_embedding_idx;
    UPDATE record_passages SET embedding = embedding::real[]::vector;
    CREATE INDEX record_passages_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops);
    CREATE INDEX record_passages_public_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops) WHERE collection_id = 1;
  END IF;
  IF (SELECT count(*) FROM (SELECT 1 FROM embedding_cache LIMIT 5001) s) <= 5000 THEN
    UPDATE embedding_cache SET embedding = embedding::real[]::vector;
  END IF;
END
$$;

-- The same function as 012's, but for the similarity of the keyword hits the dense
-- side did not find: read record by record through record_passages' primary key
-- (a few dozen records, about a dozen passages each) instead of a hash join over
-- every passage of the store. The planner cannot know the keyword side returns at
-- most p_pool records (it prices a function at 1,000 rows), so it chose the join. Same
-- answers, about 7 % less time for the statement on the starter corpus.
CREATE OR REPLACE FUNCTION chatctx_candidates(
  p_query text, p_groups jsonb, p_vector vector, p_cache_key text, p_technologies jsonb, p_collections integer[],
  p_pool int, p_passages int, p_k1 float8, p_b float8, p_keyword boolean)
RETURNS TABLE (kind text, id text, score float8, detail jsonb)
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
      RETURN QUERY SELECT 'no_vector'::text, NULL::text, NULL::float8, NULL::jsonb;
      RETURN;
    END IF;
    IF used < now() - interval '1 hour' THEN
      UPDATE embedding_cache SET last_used_at = now() WHERE cache_key = p_cache_key;
    END IF;
  END IF;
  RETURN QUERY
  WITH kw AS (SELECT k.* FROM chatctx_keyword_search(p_query, p_groups, p_technologies, p_collections, p_pool, p_k1, p_b) k WHERE p_keyword),
       dn AS (SELECT d.* FROM chatctx_vector_search(v, p_technologies, p_collections, p_passages, p_pool) d),
       sims AS (SELECT k.id, s.similarity
                  FROM (SELECT kw.id FROM kw WHERE v IS NOT NULL AND kw.id IS NOT NULL AND kw.id NOT IN (SELECT dn.id FROM dn)) k
                       CROSS JOIN LATERAL (SELECT max(1 - (p.embedding <=> v))::float8 AS similarity
                                             FROM record_passages p WHERE p.record_id = k.id::uuid) s
                 WHERE s.similarity IS NOT NULL)
  SELECT CASE WHEN kw.id IS NULL THEN 'terms' ELSE 'keyword' END, kw.id, kw.score, kw.detail FROM kw
  UNION ALL SELECT 'dense'::text, dn.id, dn.similarity, NULL::jsonb FROM dn
  UNION ALL SELECT 'similarity'::text, sims.id, sims.similarity, NULL::jsonb FROM sims;
END
$fn$;
