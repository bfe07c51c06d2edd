-- What the owner console needs: rejections kept with their text, feedback marked
-- reviewed, and which records each search showed.

-- A rejected candidate (it leaves `records`) or a rejected revision (it leaves
-- `record_revisions`; the approved version keeps serving): the text exactly as
-- staged, its hash, who rejected it, why and when. No foreign key: a rejected
-- candidate's row is gone, and its rejection must outlive it.
CREATE TABLE IF NOT EXISTS record_rejections (
  id           bigserial PRIMARY KEY,
  record_id    uuid NOT NULL,
  slug         text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('candidate', 'revision')),
  content      text NOT NULL,
  content_hash text NOT NULL,
  rejected_by  text NOT NULL,
  reason       text NOT NULL,
  rejected_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS record_rejections_record_idx ON record_rejections (record_id);
CREATE INDEX IF NOT EXISTS record_rejections_slug_idx ON record_rejections (slug);

-- When an owner marked a piece of feedback as dealt with; null while it waits.
ALTER TABLE feedback ADD COLUMN IF NOT EXISTS reviewed_at timestamptz;

-- The ids of the records a search returned, in order (record ids are not private),
-- for the records most shown.
ALTER TABLE search_events ADD COLUMN IF NOT EXISTS result_ids uuid[] NOT NULL DEFAULT '{}';
