-- The nearest passages, and the similarity of keyword hits found elsewhere.
--
-- The local server scores the keyword side in its own memory (lambdas/retrieval/
-- keyword-snapshot.ts), from a copy of the BM25 side tables of the current corpus
-- generation, and sends the records it found here. This is 014's chatctx_candidates
-- with its keyword side given instead of computed: the same vector handling (a cache
-- key read, a literal stored under its key, 'no_vector' when the key is unknown), the
-- same dense side and the same similarity of the keyword hits the dense side missed.
-- chatctx_candidates stays as it was: the AWS stack and a local search without a
-- current copy use it.

-- The query's vector: the literal given (stored under its cache key when there is one,
-- for the next time the question comes), or the one cached under the key (its last use
-- noted at most hourly); NULL when neither.
CREATE OR REPLACE FUNCTION chatctx_query_vector(p_vector vector, p_cache_key text)
RETURNS vector
LANGUAGE plpgsql VOLATILE AS $fn$
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
    IF v IS NOT NULL AND used < now() - interval '1 hour' THEN
      UPDATE embedding_cache SET last_used_at = now() WHERE cache_key = p_cache_key;
    END IF;
  END IF;
  RETURN v;
END
$fn$;

CREATE OR REPLACE FUNCTION chatctx_dense_candidates(
  p_vector vector, p_cache_key text, p_technologies jsonb, p_collections integer[],
  p_pool int, p_passages int, p_keyword_ids jsonb)
RETURNS TABLE (kind text, id text, score float8)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  v vector := chatctx_query_vector(p_vector, p_cache_key);
BEGIN
  IF v IS NULL THEN
    -- A key the cache does not hold: the caller embeds the question and asks again.
    IF p_cache_key IS NOT NULL THEN
      RETURN QUERY SELECT 'no_vector'::text, NULL::text, NULL::float8;
    END IF;
    RETURN;
  END IF;
  RETURN QUERY
  WITH dn AS (SELECT d.* FROM chatctx_vector_search(v, p_technologies, p_collections, p_passages, p_pool) d),
       kw AS (SELECT k.id FROM jsonb_array_elements_text(coalesce(p_keyword_ids, '[]'::jsonb)) AS k(id)),
       sims AS (SELECT k.id, s.similarity
                  FROM (SELECT kw.id FROM kw WHERE kw.id NOT IN (SELECT dn.id FROM dn)) k
                       CROSS JOIN LATERAL (SELECT max(1 - (p.embedding <=> v))::float8 AS similarity
                                             FROM record_passages p WHERE p.record_id = k.id::uuid) s
                 WHERE s.similarity IS NOT NULL)
  SELECT 'dense'::text, dn.id, dn.similarity FROM dn
  UNION ALL SELECT 'similarity'::text, sims.id, sims.similarity FROM sims;
END
$fn$;
