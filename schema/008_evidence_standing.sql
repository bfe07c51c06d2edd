-- How a record's quoted evidence stands, where answers can read it.
--
-- Each source row keeps the digest of its excerpt's comparable form (the same
-- digest `source_checks.excerpt_hash` holds), written at import; rows imported
-- before this migration get it from the application after migrating (the digest
-- needs the application's normaliser).
ALTER TABLE record_sources ADD COLUMN IF NOT EXISTS excerpt_hash text;

-- A check that changes how a source stands (its newest status) moves the corpus
-- generation on, so answers kept in memory (lambdas/retrieval/search-cache.ts)
-- are read again: a record whose evidence drifted may be shown with a lower
-- confidence. The function runs as its owner because the scheduled check's role
-- may write nothing but `source_checks`.
CREATE OR REPLACE FUNCTION chatctx_source_check_generation() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $fn$
DECLARE
  previous text;
BEGIN
  SELECT c.status INTO previous FROM source_checks c
   WHERE c.url = NEW.url AND c.excerpt_hash = NEW.excerpt_hash AND c.id <> NEW.id
   ORDER BY c.checked_at DESC, c.id DESC LIMIT 1;
  IF previous IS DISTINCT FROM NEW.status THEN
    UPDATE corpus_stats SET generation = generation + 1 WHERE id = 1;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE TRIGGER source_checks_generation AFTER INSERT ON source_checks
  FOR EACH ROW EXECUTE FUNCTION chatctx_source_check_generation();
