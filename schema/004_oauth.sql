-- OAuth 2.1 for connector clients that cannot send a static API key. An OAuth
-- grant stands for the API key a person pasted on the consent page: codes and
-- refresh tokens name that key, so revoking the key ends them. Every secret
-- here (client ids issued by registration, codes, refresh tokens) is stored as a
-- keyed hash, never as itself; each row expires.

-- Clients registered dynamically (RFC 7591). Clients that identify themselves
-- with a metadata document URL are fetched when used and never stored.
CREATE TABLE IF NOT EXISTS oauth_clients (
  client_hash   text PRIMARY KEY,
  client_name   text,
  redirect_uris jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);

-- Authorization codes: single use (deleted when exchanged), minutes long.
CREATE TABLE IF NOT EXISTS oauth_codes (
  code_hash      text PRIMARY KEY,
  client_hash    text NOT NULL,
  api_key_id     uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  redirect_uri   text NOT NULL,
  code_challenge text NOT NULL,
  resource       text NOT NULL,
  expires_at     timestamptz NOT NULL
);

-- Refresh tokens: each use deletes the row and issues a new one (rotation).
CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (
  token_hash  text PRIMARY KEY,
  client_hash text NOT NULL,
  api_key_id  uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  resource    text NOT NULL,
  expires_at  timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS oauth_refresh_tokens_api_key_id ON oauth_refresh_tokens (api_key_id);
