-- OAuth that holds against replay and flooding.
--
-- Registrations: a client registered but never used expires a day after
-- registering; the first consent to it (a person with an API key approving it)
-- confirms it for its full life. Clients registered before this migration keep
-- the life they were given.
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS confirmed_at timestamptz;
UPDATE oauth_clients SET confirmed_at = created_at WHERE confirmed_at IS NULL;
CREATE INDEX IF NOT EXISTS oauth_clients_pending ON oauth_clients (expires_at) WHERE confirmed_at IS NULL;

-- Token families: everything issued from one authorization code (the access and
-- refresh tokens, and each rotation's) belongs to its family. A replayed refresh
-- token or code revokes the family, and access tokens name their family, so the
-- bearer check refuses them too. A family lives as long as its newest refresh token.
CREATE TABLE IF NOT EXISTS oauth_families (
  family_id   uuid PRIMARY KEY,
  client_hash text NOT NULL,
  api_key_id  uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);

-- Codes are kept (as hashes) a day past their expiry with a use count, so a second
-- use is recognised as a replay rather than as an unknown code. Whether the
-- authorization request named its redirect_uri decides whether the token request must.
ALTER TABLE oauth_codes ADD COLUMN IF NOT EXISTS family_id uuid;
ALTER TABLE oauth_codes ADD COLUMN IF NOT EXISTS uses integer NOT NULL DEFAULT 0;
ALTER TABLE oauth_codes ADD COLUMN IF NOT EXISTS redirect_uri_given boolean NOT NULL DEFAULT true;
UPDATE oauth_codes SET family_id = gen_random_uuid() WHERE family_id IS NULL;
ALTER TABLE oauth_codes ALTER COLUMN family_id SET NOT NULL;

-- Spent refresh tokens stay (with their use count) until their family expires.
ALTER TABLE oauth_refresh_tokens ADD COLUMN IF NOT EXISTS family_id uuid;
ALTER TABLE oauth_refresh_tokens ADD COLUMN IF NOT EXISTS uses integer NOT NULL DEFAULT 0;
UPDATE oauth_refresh_tokens SET family_id = gen_random_uuid() WHERE family_id IS NULL;
INSERT INTO oauth_families (family_id, client_hash, api_key_id, expires_at)
  SELECT family_id, client_hash, api_key_id, expires_at FROM oauth_refresh_tokens
  ON CONFLICT (family_id) DO NOTHING;
ALTER TABLE oauth_refresh_tokens ALTER COLUMN family_id SET NOT NULL;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'oauth_refresh_tokens_family') THEN
    ALTER TABLE oauth_refresh_tokens ADD CONSTRAINT oauth_refresh_tokens_family
      FOREIGN KEY (family_id) REFERENCES oauth_families (family_id) ON DELETE CASCADE;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS oauth_refresh_tokens_family_id ON oauth_refresh_tokens (family_id);
CREATE INDEX IF NOT EXISTS oauth_families_expires_at ON oauth_families (expires_at);
