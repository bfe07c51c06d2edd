/**
 * The OAuth rows in Postgres (`schema/004_oauth.sql`): dynamically registered
 * clients, authorization codes and refresh tokens, each under a keyed hash and
 * with an expiry. Taking a code or a refresh token deletes it in the same
 * statement, so each is used at most once even when two requests race.
 *
 * Time comes from the caller (`now`), so expiry follows an injected clock. Expired
 * rows are deleted when a new row of their kind is written.
 */
import type { Sql } from '../ports/sql.ts';

export interface StoredClient {
  readonly clientName: string | null;
  readonly redirectUris: readonly string[];
}

export interface Grant {
  readonly clientHash: string;
  readonly apiKeyId: string;
  readonly resource: string;
}

export interface StoredCode extends Grant {
  readonly redirectUri: string;
  readonly codeChallenge: string;
}

/** A taken code or refresh token, and whether the API key behind it is still active. */
export type Taken<T> = T & { readonly keyActive: boolean };

export class OAuthStore {
  constructor(private readonly sql: Sql) {}

  async addClient(clientHash: string, client: StoredClient, now: Date, expiresAt: Date): Promise<void> {
    await this.sql.query('DELETE FROM oauth_clients WHERE expires_at <= $1::timestamptz', [now.toISOString()]);
    await this.sql.query('INSERT INTO oauth_clients (client_hash, client_name, redirect_uris, expires_at) VALUES ($1, $2, $3::jsonb, $4::timestamptz)', [
      clientHash,
      client.clientName,
      JSON.stringify(client.redirectUris),
      expiresAt.toISOString(),
    ]);
  }

  async client(clientHash: string, now: Date): Promise<StoredClient | undefined> {
    const [row] = await this.sql.query<{ client_name: string | null; redirect_uris: string[] }>(
      'SELECT client_name, redirect_uris FROM oauth_clients WHERE client_hash = $1 AND expires_at > $2::timestamptz',
      [clientHash, now.toISOString()],
      { json: ['redirect_uris'] },
    );
    return row ? { clientName: row.client_name, redirectUris: row.redirect_uris } : undefined;
  }

  async addCode(codeHash: string, code: StoredCode, now: Date, expiresAt: Date): Promise<void> {
    await this.sql.query('DELETE FROM oauth_codes WHERE expires_at <= $1::timestamptz', [now.toISOString()]);
    await this.sql.query(
      `INSERT INTO oauth_codes (code_hash, client_hash, api_key_id, redirect_uri, code_challenge, resource, expires_at)
       VALUES ($1, $2, $3::uuid, $4, $5, $6, $7::timestamptz)`,
      [codeHash, code.clientHash, code.apiKeyId, code.redirectUri, code.codeChallenge, code.resource, expiresAt.toISOString()],
    );
  }

  /** Deletes the code and returns it, if it existed and had not expired. */
  async takeCode(codeHash: string, now: Date): Promise<Taken<StoredCode> | undefined> {
    const [row] = await this.sql.query<{ client_hash: string; api_key_id: string; redirect_uri: string; code_challenge: string; resource: string; fresh: boolean; key_active: boolean }>(
      `DELETE FROM oauth_codes c USING api_keys k WHERE c.code_hash = $1 AND k.id = c.api_key_id
       RETURNING c.client_hash, c.api_key_id::text AS api_key_id, c.redirect_uri, c.code_challenge, c.resource,
                 c.expires_at > $2::timestamptz AS fresh, k.revoked_at IS NULL AS key_active`,
      [codeHash, now.toISOString()],
    );
    if (!row?.fresh) return undefined;
    return {
      clientHash: row.client_hash,
      apiKeyId: row.api_key_id,
      redirectUri: row.redirect_uri,
      codeChallenge: row.code_challenge,
      resource: row.resource,
      keyActive: row.key_active,
    };
  }

  async addRefreshToken(tokenHash: string, grant: Grant, now: Date, expiresAt: Date): Promise<void> {
    await this.sql.query('DELETE FROM oauth_refresh_tokens WHERE expires_at <= $1::timestamptz', [now.toISOString()]);
    await this.sql.query(
      'INSERT INTO oauth_refresh_tokens (token_hash, client_hash, api_key_id, resource, expires_at) VALUES ($1, $2, $3::uuid, $4, $5::timestamptz)',
      [tokenHash, grant.clientHash, grant.apiKeyId, grant.resource, expiresAt.toISOString()],
    );
  }

  /** Deletes the refresh token and returns its grant, if it existed and had not expired. */
  async takeRefreshToken(tokenHash: string, now: Date): Promise<Taken<Grant> | undefined> {
    const [row] = await this.sql.query<{ client_hash: string; api_key_id: string; resource: string; fresh: boolean; key_active: boolean }>(
      `DELETE FROM oauth_refresh_tokens t USING api_keys k WHERE t.token_hash = $1 AND k.id = t.api_key_id
       RETURNING t.client_hash, t.api_key_id::text AS api_key_id, t.resource,
                 t.expires_at > $2::timestamptz AS fresh, k.revoked_at IS NULL AS key_active`,
      [tokenHash, now.toISOString()],
    );
    if (!row?.fresh) return undefined;
    return { clientHash: row.client_hash, apiKeyId: row.api_key_id, resource: row.resource, keyActive: row.key_active };
  }
}
