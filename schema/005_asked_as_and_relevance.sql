-- Answers in an agent's own words: how each record is asked for (`asked_as`, its
-- own search field), the phrasings the duplicates gate compares, the synonyms an
-- owner adds to queries, the relevance profile calibrated per embedder, and the
-- retrieval statement that reports which query words each candidate matched (so
-- that stack names, error codes and synonyms are weighed by the code that knows
-- them, lambdas/retrieval/query-analysis.ts).

-- Symptoms, error texts, decision phrasings, acronyms: searched with its own weight
-- (FIELD_WEIGHTS.asked in lambdas/records/bm25-index.ts) and embedded as its own passages.
ALTER TABLE records ADD COLUMN IF NOT EXISTS asked_as jsonb NOT NULL DEFAULT '[]';
ALTER TABLE records ADD COLUMN IF NOT EXISTS asked_vector tsvector
  GENERATED ALWAYS AS (jsonb_to_tsvector('english', asked_as, '["string"]')) STORED;

-- A phrasing reduced to what tells two phrasings apart: lower case, letters and digits.
CREATE OR REPLACE FUNCTION chatctx_phrase_key(p text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT btrim(regexp_replace(lower(p), '[^[:alnum:]]+', ' ', 'g'))
$fn$;

-- The titles and asked_as phrasings of approved records, by key: the duplicates gate
-- refuses a phrasing that is already another record's (lambdas/records/bm25-index.ts
-- keeps it, with the BM25 tables, in the same transaction as every change).
CREATE TABLE IF NOT EXISTS record_phrasings (
  phrase    text NOT NULL,
  record_id uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  PRIMARY KEY (phrase, record_id)
);
CREATE INDEX IF NOT EXISTS record_phrasings_record_idx ON record_phrasings (record_id);

-- The same phrasings as lexemes (phrase 0 the title, 1… the asked_as items), so a search
-- can tell how fully a question says one of them without analysing any text of the
-- records: only approved records, kept in the same transaction as record_terms.
CREATE TABLE IF NOT EXISTS record_phrase_terms (
  record_id uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  phrase    integer NOT NULL,
  lexeme    text NOT NULL,
  PRIMARY KEY (record_id, phrase, lexeme)
);
CREATE INDEX IF NOT EXISTS record_phrase_terms_lexeme_idx ON record_phrase_terms (lexeme, record_id);
-- Each phrasing's IDF mass (the sum of its lexemes' IDF), the denominator of the share
-- above: recomputed for every phrasing whenever the statistics change (reindexing moves
-- n and df, so every IDF), so a search sums only the words a question shares with it.
CREATE TABLE IF NOT EXISTS record_phrase_mass (
  record_id uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  phrase    integer NOT NULL,
  mass      float8 NOT NULL,
  PRIMARY KEY (record_id, phrase)
);
-- Re-derives both phrasing tables for these records from what they say now (only
-- approved records have rows); reindexing calls it in its transaction
-- (lambdas/records/bm25-index.ts), and this migration for every existing record.
CREATE OR REPLACE FUNCTION chatctx_index_phrasings(p_ids uuid[]) RETURNS void
LANGUAGE sql VOLATILE AS $fn$
  DELETE FROM record_phrasings WHERE record_id = ANY (p_ids);
  DELETE FROM record_phrase_terms WHERE record_id = ANY (p_ids);
  INSERT INTO record_phrasings (phrase, record_id)
  SELECT DISTINCT chatctx_phrase_key(p.phrase), r.id
    FROM records r, LATERAL (SELECT r.title AS phrase UNION ALL SELECT jsonb_array_elements_text(r.asked_as)) p
   WHERE r.id = ANY (p_ids) AND r.status = 'approved' AND chatctx_phrase_key(p.phrase) <> '';
  INSERT INTO record_phrase_terms (record_id, phrase, lexeme)
  SELECT DISTINCT r.id, p.ord::int, u.lexeme
    FROM records r,
         LATERAL (SELECT r.title AS text, 0::bigint AS ord
                  UNION ALL SELECT e.value, e.ord FROM jsonb_array_elements_text(r.asked_as) WITH ORDINALITY AS e(value, ord)) p,
         LATERAL unnest(to_tsvector('english', p.text)) u
   WHERE r.id = ANY (p_ids) AND r.status = 'approved';
$fn$;
SELECT chatctx_index_phrasings(ARRAY(SELECT id FROM records));

-- Recomputes every phrasing's IDF mass from the current statistics; reindexing calls
-- it last, in its transaction (lambdas/records/bm25-index.ts).
CREATE OR REPLACE FUNCTION chatctx_refresh_phrase_masses() RETURNS void
LANGUAGE sql VOLATILE AS $fn$
  DELETE FROM record_phrase_mass;
  INSERT INTO record_phrase_mass (record_id, phrase, mass)
  SELECT p.record_id, p.phrase, sum(ln(1 + (c.n - coalesce(ts.df, 0) + 0.5) / (coalesce(ts.df, 0) + 0.5)))
    FROM record_phrase_terms p CROSS JOIN corpus_stats c LEFT JOIN term_stats ts ON ts.lexeme = p.lexeme
   WHERE c.id = 1
   GROUP BY p.record_id, p.phrase;
$fn$;
SELECT chatctx_refresh_phrase_masses();

-- Query synonyms the owner adds (`chatctx policy add-synonym`), on top of the
-- reviewed defaults in guidance/policy/synonyms.json.
CREATE TABLE IF NOT EXISTS query_synonyms (
  term       text PRIMARY KEY,
  expansions jsonb NOT NULL,
  added_at   timestamptz NOT NULL DEFAULT now()
);

-- The relevance policy fitted for an embedder profile (`use-lite`, `titan-v2`,
-- `none`) by `npm run eval:guidance -- --calibrate`; a profile absent here uses the
-- reviewed default in guidance/policy/relevance-profiles.json.
CREATE TABLE IF NOT EXISTS relevance_profiles (
  profile   text PRIMARY KEY,
  policy    jsonb NOT NULL,
  fitted_at timestamptz NOT NULL DEFAULT now()
);

-- Both change what a search returns: kept answers must go.
CREATE OR REPLACE TRIGGER query_synonyms_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON query_synonyms
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();
CREATE OR REPLACE TRIGGER relevance_profiles_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON relevance_profiles
  FOR EACH STATEMENT EXECUTE FUNCTION chatctx_next_generation();

DROP FUNCTION IF EXISTS chatctx_candidates(text, vector, text, jsonb, int, int, float8, float8, float8, boolean);
DROP FUNCTION IF EXISTS chatctx_keyword_search(text, jsonb, int, float8, float8, float8);

-- Okapi BM25 over record_terms, OR semantics, each query word weighted by the
-- groups that name it (p_groups: [{"text": …, "weight": w}]; a word in no group
-- weighs 1, a word in several takes the smallest weight). Rows: one per hit with the
-- query lexemes it contains and the largest share of one of its phrasings (title,
-- asked_as item) the query says (`detail`), then one 'terms' row (null id) describing
-- the query: each lexeme with its IDF and document frequency, each group's lexemes,
-- how many records matched any word, and how many records the index holds.
CREATE OR REPLACE FUNCTION chatctx_keyword_search(
  p_query text, p_groups jsonb, p_technologies jsonb, p_limit int, p_k1 float8, p_b float8)
RETURNS TABLE (id text, score float8, detail jsonb)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
BEGIN
  -- Planned for this call's query on every call (EXECUTE): the plan PL/pgSQL would keep
  -- after a few calls, made for any query, took three times as long (20 ms against 7 on
  -- the starter corpus).
  RETURN QUERY EXECUTE $q$
  WITH q AS (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', $1)) u),
       g AS (SELECT (t.ord - 1)::int AS i, coalesce((t.item ->> 'weight')::float8, 1) AS weight,
                    ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', coalesce(t.item ->> 'text', ''))) u ORDER BY u.lexeme) AS lexemes
               FROM jsonb_array_elements(coalesce($2, '[]'::jsonb)) WITH ORDINALITY AS t(item, ord)),
       gw AS (SELECT l AS lexeme, min(g.weight) AS weight FROM g, unnest(g.lexemes) AS l GROUP BY l),
       s AS (SELECT c.n::float8 AS n, CASE WHEN c.n > 0 THEN c.total_len / c.n ELSE 1 END AS avgdl FROM corpus_stats c WHERE c.id = 1),
       qt AS (SELECT q.lexeme, coalesce(t.df, 0) AS df, coalesce(gw.weight, 1) AS weight,
                     ln(1 + (s.n - coalesce(t.df, 0) + 0.5) / (coalesce(t.df, 0) + 0.5)) AS idf
                FROM q CROSS JOIN s LEFT JOIN term_stats t USING (lexeme) LEFT JOIN gw USING (lexeme)),
       -- One index range scan of record_terms per query lexeme (OFFSET 0 keeps the
       -- planner from turning it into a hash join over the whole table).
       -- The same scan says which query words each record contains (every query word,
       -- whatever its weight); a record is a candidate only through a weighted one.
       scored AS (
         SELECT rt.record_id,
                sum(qt.weight * qt.idf * rt.tf * ($5 + 1) / (rt.tf + $5 * (1 - $6 + $6 * rt.doc_len / s.avgdl))) AS score,
                array_agg(qt.lexeme ORDER BY qt.lexeme) AS matched
           FROM qt CROSS JOIN s
                CROSS JOIN LATERAL (SELECT r.record_id, r.tf, r.doc_len FROM record_terms r WHERE r.lexeme = qt.lexeme OFFSET 0) rt
          WHERE $3 IS NULL OR rt.record_id IN (
                  SELECT a.record_id FROM record_applies_to a
                   WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($3) t))
          GROUP BY rt.record_id
         HAVING bool_or(qt.weight > 0)),
       top AS (SELECT sc.record_id, sc.score, sc.matched FROM scored sc ORDER BY sc.score DESC, sc.record_id LIMIT $4),
       -- The largest share of one of each hit's phrasings (its title, its asked_as items)
       -- that the query contains, by IDF mass: the query words it has (record_phrase_terms,
       -- through its lexeme index) over its whole mass (record_phrase_mass).
       -- (One index range scan per query lexeme, as for record_terms: probing each
       -- lexeme for each hit instead costs twice as much.)
       said AS (SELECT p.record_id, p.phrase, sum(qt.idf) AS idf
                  FROM qt CROSS JOIN LATERAL (SELECT x.record_id, x.phrase FROM record_phrase_terms x WHERE x.lexeme = qt.lexeme OFFSET 0) p
                 WHERE p.record_id IN (SELECT top.record_id FROM top)
                 GROUP BY p.record_id, p.phrase),
       phrase AS (
         SELECT said.record_id, max(said.idf / nullif(m.mass, 0)) AS share
           FROM said JOIN record_phrase_mass m ON m.record_id = said.record_id AND m.phrase = said.phrase
          GROUP BY said.record_id)
  -- Which query words each hit contains, and how fully the query says one of its phrasings.
  SELECT top.record_id::text, top.score::float8,
         jsonb_build_object(
           'matched', to_jsonb(top.matched),
           'phrase', coalesce(ph.share, 0))
    FROM top LEFT JOIN phrase ph ON ph.record_id = top.record_id
  UNION ALL
  SELECT NULL::text, NULL::float8, jsonb_build_object(
           'lexemes', (SELECT coalesce(jsonb_agg(jsonb_build_array(qt.lexeme, qt.idf, qt.df) ORDER BY qt.lexeme), '[]'::jsonb) FROM qt),
           'groups', (SELECT coalesce(jsonb_agg(to_jsonb(g.lexemes) ORDER BY g.i), '[]'::jsonb) FROM g),
           'candidates', (SELECT count(*) FROM scored),
           'n', (SELECT s.n FROM s))
  $q$ USING p_query, p_groups, p_technologies, p_limit, p_k1, p_b;
END
$fn$;

-- Everything ranking needs for one query, in one statement (see
-- schema/002_search_functions.sql for the vector and its cache). Rows: 'keyword'
-- hits with the lexemes they matched, one 'terms' row, 'dense' hits with their best
-- passage's similarity, the 'similarity' of keyword hits the dense side did not
-- find, or only 'no_vector' when the cache key named no embedding.
CREATE OR REPLACE FUNCTION chatctx_candidates(
  p_query text, p_groups jsonb, p_vector vector, p_cache_key text, p_technologies jsonb, p_pool int, p_passages int,
  p_k1 float8, p_b float8, p_keyword boolean)
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
  WITH kw AS (SELECT k.* FROM chatctx_keyword_search(p_query, p_groups, p_technologies, p_pool, p_k1, p_b) k WHERE p_keyword),
       dn AS (SELECT d.* FROM chatctx_vector_search(v, p_technologies, p_passages, p_pool) d),
       sims AS (SELECT p.record_id::text AS id, max(1 - (p.embedding <=> v))::float8 AS similarity
                  FROM record_passages p
                 WHERE v IS NOT NULL
                   AND p.record_id IN (SELECT kw.id::uuid FROM kw WHERE kw.id IS NOT NULL AND kw.id NOT IN (SELECT dn.id FROM dn))
                 GROUP BY p.record_id)
  SELECT CASE WHEN kw.id IS NULL THEN 'terms' ELSE 'keyword' END, kw.id, kw.score, kw.detail FROM kw
  UNION ALL SELECT 'dense'::text, dn.id, dn.similarity, NULL::jsonb FROM dn
  UNION ALL SELECT 'similarity'::text, sims.id, sims.similarity, NULL::jsonb FROM sims;
END
$fn$;
