-- Initial chatctx schema. Compatible with PostgreSQL 16 (Aurora) and PGlite.
-- Every statement is idempotent so a partially applied run can be repeated.

CREATE EXTENSION IF NOT EXISTS vector;

-- Owner-reviewed guidance. Lists live in jsonb so a record reads back exactly
-- as it was written; the weighted tsvector is derived, never written by hand.
CREATE TABLE IF NOT EXISTS records (
  id                  uuid PRIMARY KEY,
  slug                text NOT NULL UNIQUE,
  status              text NOT NULL CHECK (status IN ('candidate', 'approved', 'deprecated')),
  title               text NOT NULL,
  topic               text NOT NULL,
  task_types          text[] NOT NULL DEFAULT '{}',
  summary             text,
  recommendation      text NOT NULL,
  rationale           text,
  conditions          jsonb NOT NULL DEFAULT '[]',
  exceptions          jsonb NOT NULL DEFAULT '[]',
  pitfalls            jsonb NOT NULL DEFAULT '[]',
  verification_checks jsonb NOT NULL DEFAULT '[]',
  examples            text,
  confidence          text NOT NULL CHECK (confidence IN ('high', 'medium', 'low')),
  content_version     integer NOT NULL DEFAULT 1,
  -- sha256 of the record's content fields: a re-import of unchanged text is a no-op.
  content_hash        text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  approved_at         timestamptz,
  search_vector       tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('english', coalesce(title, '')), 'A')
   || setweight(to_tsvector('english', coalesce(summary, '')), 'B')
   || setweight(to_tsvector('english', recommendation), 'B')
   || setweight(to_tsvector('english', coalesce(rationale, '')), 'C')
   || setweight(jsonb_to_tsvector('english', conditions || pitfalls, '["string"]'), 'D')
  ) STORED,
  -- Which model embedded this record's passages, and from which content; a
  -- mismatch with (current model, content_hash) marks the embedding stale.
  embedding_model     text,
  embedded_hash       text
);
CREATE INDEX IF NOT EXISTS records_search_vector_idx ON records USING gin (search_vector);
CREATE INDEX IF NOT EXISTS records_status_idx ON records (status);

CREATE TABLE IF NOT EXISTS record_applies_to (
  record_id          uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  position           integer NOT NULL,
  kind               text NOT NULL,
  name               text NOT NULL,
  version_constraint text,
  PRIMARY KEY (record_id, position)
);
CREATE INDEX IF NOT EXISTS record_applies_to_name_idx ON record_applies_to (lower(name));

CREATE TABLE IF NOT EXISTS record_sources (
  record_id        uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  position         integer NOT NULL,
  title            text NOT NULL,
  url              text NOT NULL,
  publisher        text,
  evidence_excerpt text,
  relation         text NOT NULL,
  PRIMARY KEY (record_id, position)
);

-- Every approved version of a record, so an owner can see what changed.
CREATE TABLE IF NOT EXISTS record_history (
  record_id       uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  content_version integer NOT NULL,
  snapshot        jsonb NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (record_id, content_version)
);

-- Only the HMAC-SHA256(pepper, key) is stored; the plaintext is shown once.
CREATE TABLE IF NOT EXISTS api_keys (
  id           uuid PRIMARY KEY,
  name         text NOT NULL,
  key_hash     text NOT NULL UNIQUE,
  daily_quota  integer CHECK (daily_quota IS NULL OR daily_quota >= 0),
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz,
  last_used_at timestamptz
);

-- Anonymous by construction: no key id, IP address or user agent column exists.
CREATE TABLE IF NOT EXISTS feedback (
  id         uuid PRIMARY KEY,
  category   text NOT NULL,
  record_ref text,
  source     text NOT NULL,
  comment    text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Retrieval analytics: a salted hash of the query, never the query itself.
CREATE TABLE IF NOT EXISTS search_events (
  id           bigserial PRIMARY KEY,
  query_hash   text NOT NULL,
  topics       text[] NOT NULL DEFAULT '{}',
  technologies text[] NOT NULL DEFAULT '{}',
  mode         text NOT NULL,
  result_count integer NOT NULL,
  degraded     boolean NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- Daily tool-call counters. The subject is "guest:<hmac of ip>" or "key:<key id>".
CREATE TABLE IF NOT EXISTS quota_counters (
  subject text NOT NULL,
  day     date NOT NULL,
  used    integer NOT NULL,
  PRIMARY KEY (subject, day)
);

-- BM25 side tables, maintained by the import code for approved records only, so
-- that document frequencies, N and average length always describe what search sees.
-- tf and doc_len are field-weighted (title counts more than rationale).
CREATE TABLE IF NOT EXISTS record_terms (
  lexeme    text NOT NULL,
  record_id uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  tf        real NOT NULL,
  doc_len   real NOT NULL,
  PRIMARY KEY (lexeme, record_id)
);
CREATE INDEX IF NOT EXISTS record_terms_record_idx ON record_terms (record_id);

CREATE TABLE IF NOT EXISTS term_stats (
  lexeme text PRIMARY KEY,
  df     integer NOT NULL
);

CREATE TABLE IF NOT EXISTS corpus_stats (
  id        smallint PRIMARY KEY CHECK (id = 1),
  n         integer NOT NULL,
  total_len double precision NOT NULL
);
INSERT INTO corpus_stats (id, n, total_len) VALUES (1, 0, 0) ON CONFLICT (id) DO NOTHING;

-- Dense side: one or more passage embeddings per record (the sentence encoder
-- reads only ~128 tokens, so long records are embedded as overlapping passages).
CREATE TABLE IF NOT EXISTS record_passages (
  record_id uuid NOT NULL REFERENCES records (id) ON DELETE CASCADE,
  passage   integer NOT NULL,
  embedding vector(512) NOT NULL,
  PRIMARY KEY (record_id, passage)
);
CREATE INDEX IF NOT EXISTS record_passages_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops);

-- Query embeddings keyed by HMAC(pepper, model, dimensions, normalized query):
-- repeated questions skip the encoder, and the query text is never stored.
CREATE TABLE IF NOT EXISTS embedding_cache (
  cache_key    text PRIMARY KEY,
  embedding    vector(512) NOT NULL,
  last_used_at timestamptz NOT NULL DEFAULT now()
);

-- Small facts about this store, e.g. whether the starter corpus was loaded.
CREATE TABLE IF NOT EXISTS settings (
  key   text PRIMARY KEY,
  value text NOT NULL
);
