-- Owner review: what the quality gates need on a record, who approved which
-- version with which gate report and overrides, revisions staged while the
-- approved text keeps serving, and deprecation with a successor.

-- When an owner last checked the guidance against its sources, and the licence
-- of the record's own text (the corpus is published under it).
ALTER TABLE records ADD COLUMN IF NOT EXISTS reviewed_at date;
ALTER TABLE records ADD COLUMN IF NOT EXISTS license text;
-- Slugs of approved records this one replaces; approving it deprecates them.
ALTER TABLE records ADD COLUMN IF NOT EXISTS supersedes jsonb NOT NULL DEFAULT '[]';
-- The time the record's file declared for its content, if it declared one:
-- approving the record then keeps it as updated_at instead of the approval time.
ALTER TABLE records ADD COLUMN IF NOT EXISTS declared_updated_at timestamptz;
-- The record exactly as imported (validated JSON text, key order kept): approval
-- and the gates judge this, so approving a candidate publishes what was reviewed.
ALTER TABLE records ADD COLUMN IF NOT EXISTS file text;
ALTER TABLE records ADD COLUMN IF NOT EXISTS deprecated_at timestamptz;
ALTER TABLE records ADD COLUMN IF NOT EXISTS deprecation_reason text;
ALTER TABLE records ADD COLUMN IF NOT EXISTS superseded_by uuid REFERENCES records (id) ON DELETE SET NULL;

-- Every approval of a version: who, when, the gate report, the overrides.
ALTER TABLE record_history ADD COLUMN IF NOT EXISTS approved_by text;
ALTER TABLE record_history ADD COLUMN IF NOT EXISTS gate_report jsonb;
ALTER TABLE record_history ADD COLUMN IF NOT EXISTS overrides jsonb NOT NULL DEFAULT '[]';

-- A changed text for an approved record, waiting for review. One per record: a
-- newer import replaces it. The approved version keeps serving until it is approved.
CREATE TABLE IF NOT EXISTS record_revisions (
  record_id    uuid PRIMARY KEY REFERENCES records (id) ON DELETE CASCADE,
  content      text NOT NULL,
  content_hash text NOT NULL,
  staged_at    timestamptz NOT NULL DEFAULT now()
);

-- Store-level additions to the source policy and the technology vocabulary
-- (hosts an owner trusts or blocks, names they use), on top of the reviewed file.
CREATE TABLE IF NOT EXISTS review_policy (
  kind       text NOT NULL CHECK (kind IN ('authoritative', 'blocked', 'technology')),
  value      text NOT NULL,
  note       text,
  added_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, value)
);

-- Analytics read and purge search events by age.
CREATE INDEX IF NOT EXISTS search_events_created_at_idx ON search_events (created_at);
