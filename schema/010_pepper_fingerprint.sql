-- Which pepper this database's API key hashes, OAuth grants and guest counters were
-- made with, as a keyed fingerprint (never the pepper). The migrate function on AWS
-- records it on its first run and refuses a deploy whose pepper differs
-- (lambdas/storage/pepper-fingerprint.ts): a new pepper would silently revoke every
-- key and grant. One row at most.
CREATE TABLE IF NOT EXISTS pepper_fingerprint (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  fingerprint text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
