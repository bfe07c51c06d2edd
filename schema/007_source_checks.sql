-- Whether each quoted excerpt is still on the page it cites. A check is made for
-- a source URL and an excerpt (its comparable form's digest), not for a record:
-- every record quoting the same words from the same page shares the result, and a
-- revision that changes the quote starts unchecked. Rows are kept as history; the
-- newest per URL and excerpt is the source's standing.
CREATE TABLE IF NOT EXISTS source_checks (
  id           bigserial PRIMARY KEY,
  url          text NOT NULL,
  excerpt_hash text NOT NULL,
  status       text NOT NULL CHECK (status IN ('verified', 'drifted', 'unreachable', 'moved', 'too_large', 'not_text')),
  -- How the result was reached: fetched by `records verify` or the schedule, or
  -- read from the page by `records draft --from-url`.
  how          text NOT NULL CHECK (how IN ('fetched', 'draft')),
  detail       text,
  text_hash    text,
  closest      text,
  similarity   real,
  checked_at   timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS source_checks_latest ON source_checks (url, excerpt_hash, checked_at DESC);
