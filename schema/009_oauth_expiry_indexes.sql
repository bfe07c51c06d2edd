-- Expired OAuth rows are deleted whenever a new row of their kind is written
-- (lambdas/oauth/oauth-store.ts); these indexes let that delete find them without
-- reading the whole table, however many rows a flood left behind.
CREATE INDEX IF NOT EXISTS oauth_clients_expires_at ON oauth_clients (expires_at);
CREATE INDEX IF NOT EXISTS oauth_codes_expires_at ON oauth_codes (expires_at);
