-- The nearest passages through the HNSW index at every size where it is faster, which
-- is every size but the smallest (bin/bench/vector-plan.ts, docs/testing.md, medians of
-- 3 runs on PGlite): the index's statement takes 4 to 9 ms whatever the store holds;
-- an exact scan 4.8 ms at 100 passages, 5.6 at 200, 23 at 1,660 and 39 at 3,337. The
-- previous version (schema/012_collections.sql) read every visible passage exactly up
-- to 3,000 of them, and counted up to 3,001 of them first, on every search: on a store
-- of 500 generated records (1,660 passages) its function took 3 times as long as this
-- one's.
--
-- The exact scan stays where it costs nothing or is needed:
--
-- - a store of 150 visible passages or fewer: there the function on the index costs
--   1.24 times what it costs scanning (100 passages), the same at 150, 0.93 times at
--   200 and 0.79 at 300 (setting up the index read is what a tiny scan saves), and the
--   exact answer is the reproducible one;
-- - a caller that cannot see every passage of the store and is not a guest (a key
--   scoped to some collections), up to 3,000 visible passages. The store's index graph
--   holds every collection's passages, and an approximate walk that skips the
--   invisible ones still goes where they lead, so which visible passages it finds
--   would change with the records beside them (012 explains what the leak tests saw).
--
-- A caller who sees everything (a store with one collection, or a key scoped to all of
-- them) walks the store's graph, which then holds visible passages only. A guest (or
-- any caller of public alone) walks the public collection's own graph, below: public
-- passages only, whatever else the store holds. Beside 2,000 internal records a
-- guest's search then costs what it costs on a store without them (bench:collections).
--
-- Exact answers are reproducible: two stores holding the same passages give the same
-- nearest ones, where two HNSW graphs (built in a random order) can differ by a near
-- tie. An owner who wants that on a larger store, at the scan's cost (about 9
-- microseconds a passage), sets the size up to which the scan is used: on Aurora
-- ALTER DATABASE <name> SET chatctx.exact_passages = '3000' (new sessions read it), on
-- PGlite ALTER SYSTEM SET chatctx.exact_passages = '3000' (read at every open).
-- Anything but a whole number is ignored. The no-leak tests set it on both stores they
-- compare, so that they compare what collections change, not two graphs.
--
-- Whether a caller sees everything is one index probe per collection that holds
-- passages, not a count of passages.
--
-- The index is read as 012 read it beyond 3,000 passages: ef_search the passages asked
-- for (40 beside keyword search), an iterative scan, sorting off. On the benchmark's
-- stores that finds 96 to 98 % of the exact nearest passages; an ef_search of 100
-- found 99 to 100 % but cost 20 to 40 % more, and every keyword hit gets its exact
-- similarity anyway (candidate-search.ts).
--
-- The public collection's own vector index, for guests and public-only keys beside
-- other collections: its graph holds public passages only, so an approximate walk
-- through it finds what it would find in a store holding the public collection alone.
-- (Other collections get no index of their own: creating one is DDL the owner's role
-- runs, at collection creation, which is not built yet.)
CREATE INDEX IF NOT EXISTS record_passages_public_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops) WHERE collection_id = 1;

-- Same signature as 012's collections overload, so CREATE OR REPLACE keeps its grants;
-- the previous function without collections stays for code deployed before 012.
CREATE OR REPLACE FUNCTION chatctx_vector_search(p_vector vector, p_technologies jsonb, p_collections integer[], p_passages int, p_limit int)
RETURNS TABLE (id text, similarity float8)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  -- At or below this many visible passages the exact scan: 150, where the function
  -- costs what it does on the index, unless the database sets chatctx.exact_passages.
  exact_setting constant text := current_setting('chatctx.exact_passages', true);
  small_store constant int := CASE WHEN exact_setting ~ '^[0-9]{1,7}$' THEN exact_setting::int ELSE 150 END;
  -- Up to this many visible passages a caller who cannot see everything gets the exact answer.
  exact_limit constant int := 3000;
  hidden boolean;
  held integer;
  bound int;
  visible int;
  sorting text := current_setting('enable_sort');
  -- The records of the nearest passages: approved, visible, of the requested technologies.
  records_of constant text := '
     SELECT n.record_id::text, max(n.similarity)::float8
       FROM nearest n JOIN records r ON r.id = n.record_id
      WHERE r.status = ''approved'' AND r.collection_id = ANY ($5)
        AND ($3::jsonb IS NULL OR n.record_id IN (
              SELECT a.record_id FROM record_applies_to a
               WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($3::jsonb) t)))
      GROUP BY n.record_id
      ORDER BY 2 DESC, 1
      LIMIT $4';
BEGIN
  IF p_vector IS NULL THEN
    RETURN;
  END IF;
  -- Walks the collections that hold passages, one index probe each (min() over
  -- record_passages_collection_idx), and stops at the first the caller cannot see. A
  -- join or EXISTS per collection could be planned as a scan of every passage, which
  -- for a collection holding none would read them all.
  hidden := false;
  held := (SELECT min(p.collection_id) FROM record_passages p);
  WHILE held IS NOT NULL LOOP
    IF NOT (held = ANY (p_collections)) THEN
      hidden := true;
      EXIT;
    END IF;
    held := (SELECT min(p.collection_id) FROM record_passages p WHERE p.collection_id > held);
  END LOOP;
  -- A guest (public alone) has the public collection's own index: a graph of public
  -- passages only, so nothing else moves what the walk finds.
  bound := CASE WHEN hidden AND p_collections <> ARRAY[1] THEN greatest(exact_limit, small_store) ELSE small_store END;
  SELECT count(*) INTO visible FROM (SELECT 1 FROM record_passages p WHERE p.collection_id = ANY (p_collections) LIMIT bound + 1) s;
  IF visible <= bound THEN
    RETURN QUERY EXECUTE
      'WITH visible AS MATERIALIZED (
         SELECT p.record_id, p.embedding <=> $1 AS distance
           FROM record_passages p
          WHERE p.collection_id = ANY ($5)),
       nearest AS (
         SELECT v.record_id, 1 - v.distance AS similarity
           FROM visible v
          ORDER BY v.distance, v.record_id
          LIMIT $2)' || records_of
      USING p_vector, p_passages, p_technologies, p_limit, p_collections;
    RETURN;
  END IF;
  PERFORM set_config('hnsw.ef_search', p_passages::text, true);
  -- pgvector 0.8.0 and later; on an older extension the index simply stops at ef_search
  -- rows. Asked first rather than caught: an exception block is a subtransaction on
  -- every search.
  IF current_setting('hnsw.iterative_scan', true) IS NOT NULL THEN
    PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', true);
  END IF;
  -- Sorting off for this statement: on a small store the planner prices a sequential
  -- scan and a top-N sort below the index, which measured 3 to 5 times slower.
  PERFORM set_config('enable_sort', 'off', true);
  RETURN QUERY EXECUTE
    'WITH nearest AS MATERIALIZED (
       SELECT p.record_id, 1 - (p.embedding <=> $1) AS similarity
         FROM record_passages p
        WHERE p.collection_id = ANY ($5)
        ORDER BY p.embedding <=> $1
        LIMIT $2)' || records_of
    USING p_vector, p_passages, p_technologies, p_limit, p_collections;
  PERFORM set_config('enable_sort', sorting, true);
END
$fn$;
