/**
 * The OAuth rows in Postgres (`schema/004_oauth.sql`, `schema/006_oauth_families.sql`):
 * dynamically registered clients, authorization codes, refresh tokens and the
 * token families they belong to, each under a keyed hash and with an expiry.
 *
 * Taking a code or a refresh token counts its use in the same statement that
 * reads it, so of two requests that race exactly one sees the first use, and a
 * later one is recognised as a replay (the caller revokes the family). Spent rows
 * stay, as hashes, until their family (a refresh token) or a day past their
 * expiry (a code) ends.
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
  /** The token family: everything issued from one authorization code. */
  readonly familyId: string;
}

export interface StoredCode extends Grant {
  readonly redirectUri: string;
  /** Whether the authorization request named the redirect URI (then the token request must too). */
  readonly redirectUriGiven: boolean;
  readonly codeChallenge: string;
}

/**
 * A code or refresh token looked up by its hash, its use counted:
 * `first` when this was its first use, unexpired, its family not revoked;
 * `replayed` when it had been used before (the caller revokes the family);
 * `stale` when it expired or its family was revoked.
 */
export type Taken<T> = T & { readonly keyActive: boolean; readonly use: 'first' | 'replayed' | 'stale' };

/** How long a used code is remembered past its expiry, to recognise a replay. */
const SPENT_CODE_MEMORY = "interval '1 day'";

export class OAuthStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds a registration that expires at `expiresAt` unless confirmed, if fewer than
   * `pendingMax` unconfirmed registrations are live. False when the cap is reached.
   */
  async addClient(clientHash: string, client: StoredClient, now: Date, expiresAt: Date, pendingMax: number): Promise<boolean> {
    await this.sql.query('DELETE FROM oauth_clients WHERE expires_at <= $1::timestamptz', [now.toISOString()]);
    const rows = await this.sql.query<{ client_hash: string }>(
      `INSERT INTO oauth_clients (client_hash, client_name, redirect_uris, expires_at)
       SELECT $1, $2, $3::jsonb, $4::timestamptz
       WHERE (SELECT count(*) FROM oauth_clients WHERE confirmed_at IS NULL AND expires_at > $5::timestamptz) < $6
       RETURNING client_hash`,
      [clientHash, client.clientName, JSON.stringify(client.redirectUris), expiresAt.toISOString(), now.toISOString(), pendingMax],
    );
    return rows.length === 1;
  }

  /** Confirms a registration on its first consent: from then on it lives until `expiresAt`. */
  async confirmClient(clientHash: string, now: Date, expiresAt: Date): Promise<void> {
    await this.sql.query(
      'UPDATE oauth_clients SET confirmed_at = $2::timestamptz, expires_at = $3::timestamptz WHERE client_hash = $1 AND confirmed_at IS NULL',
      [clientHash, now.toISOString(), expiresAt.toISOString()],
    );
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
    await this.sql.query(`DELETE FROM oauth_codes WHERE expires_at <= $1::timestamptz - ${SPENT_CODE_MEMORY}`, [now.toISOString()]);
    await this.sql.query(
      `INSERT INTO oauth_codes (code_hash, client_hash, api_key_id, redirect_uri, redirect_uri_given, code_challenge, resource, family_id, expires_at)
       VALUES ($1, $2, $3::uuid, $4, $5, $6, $7, $8::uuid, $9::timestamptz)`,
      [codeHash, code.clientHash, code.apiKeyId, code.redirectUri, code.redirectUriGiven, code.codeChallenge, code.resource, code.familyId, expiresAt.toISOString()],
    );
  }

  /** Counts a use of the code and returns it, if it exists. */
  async takeCode(codeHash: string, now: Date): Promise<Taken<StoredCode> | undefined> {
    const [row] = await this.sql.query<{
      client_hash: string;
      api_key_id: string;
      redirect_uri: string;
      redirect_uri_given: boolean;
      code_challenge: string;
      resource: string;
      family_id: string;
      uses: number;
      fresh: boolean;
      key_active: boolean;
    }>(
      `UPDATE oauth_codes c SET uses = c.uses + 1 FROM api_keys k WHERE c.code_hash = $1 AND k.id = c.api_key_id
       RETURNING c.client_hash, c.api_key_id::text AS api_key_id, c.redirect_uri, c.redirect_uri_given, c.code_challenge, c.resource,
                 c.family_id::text AS family_id, c.uses, c.expires_at > $2::timestamptz AS fresh, k.revoked_at IS NULL AS key_active`,
      [codeHash, now.toISOString()],
    );
    if (!row) return undefined;
    return {
      clientHash: row.client_hash,
      apiKeyId: row.api_key_id,
      redirectUri: row.redirect_uri,
      redirectUriGiven: row.redirect_uri_given,
      codeChallenge: row.code_challenge,
      resource: row.resource,
      familyId: row.family_id,
      keyActive: row.key_active,
      use: row.uses > 1 ? 'replayed' : row.fresh ? 'first' : 'stale',
    };
  }

  /**
   * Stores a refresh token in its family, creating the family or extending it to
   * the token's expiry. False (nothing stored) when the family was revoked meanwhile.
   */
  async addRefreshToken(tokenHash: string, grant: Grant, now: Date, expiresAt: Date): Promise<boolean> {
    await this.sql.query('DELETE FROM oauth_families WHERE expires_at <= $1::timestamptz', [now.toISOString()]);
    const rows = await this.sql.query<{ token_hash: string }>(
      `WITH family AS (
         INSERT INTO oauth_families (family_id, client_hash, api_key_id, created_at, expires_at)
         VALUES ($5::uuid, $2, $3::uuid, $6::timestamptz, $7::timestamptz)
         ON CONFLICT (family_id) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE oauth_families.revoked_at IS NULL
         RETURNING family_id)
       INSERT INTO oauth_refresh_tokens (token_hash, client_hash, api_key_id, resource, family_id, expires_at)
       SELECT $1, $2, $3::uuid, $4, family_id, $7::timestamptz FROM family
       RETURNING token_hash`,
      [tokenHash, grant.clientHash, grant.apiKeyId, grant.resource, grant.familyId, now.toISOString(), expiresAt.toISOString()],
    );
    return rows.length === 1;
  }

  /** Counts a use of the refresh token and returns its grant, if it exists. */
  async takeRefreshToken(tokenHash: string, now: Date): Promise<Taken<Grant> | undefined> {
    const [row] = await this.sql.query<{ client_hash: string; api_key_id: string; resource: string; family_id: string; uses: number; fresh: boolean; key_active: boolean }>(
      `UPDATE oauth_refresh_tokens t SET uses = t.uses + 1 FROM api_keys k, oauth_families f
       WHERE t.token_hash = $1 AND k.id = t.api_key_id AND f.family_id = t.family_id
       RETURNING t.client_hash, t.api_key_id::text AS api_key_id, t.resource, t.family_id::text AS family_id, t.uses,
                 t.expires_at > $2::timestamptz AND f.revoked_at IS NULL AS fresh, k.revoked_at IS NULL AS key_active`,
      [tokenHash, now.toISOString()],
    );
    if (!row) return undefined;
    return {
      clientHash: row.client_hash,
      apiKeyId: row.api_key_id,
      resource: row.resource,
      familyId: row.family_id,
      keyActive: row.key_active,
      use: row.uses > 1 ? 'replayed' : row.fresh ? 'first' : 'stale',
    };
  }

  /**
   * Revokes a family: its refresh tokens stop, and the bearer check refuses its
   * access tokens. A family not written yet (its code's first exchange still
   * running) is written revoked, so that exchange cannot bring it to life; the
   * row outlives any token the family could have issued (`until`).
   */
  async revokeFamily(grant: Pick<Grant, 'familyId' | 'clientHash' | 'apiKeyId'>, now: Date, until: Date): Promise<void> {
    await this.sql.query(
      `INSERT INTO oauth_families (family_id, client_hash, api_key_id, created_at, expires_at, revoked_at)
       VALUES ($1::uuid, $2, $3::uuid, $4::timestamptz, $5::timestamptz, $4::timestamptz)
       ON CONFLICT (family_id) DO UPDATE SET revoked_at = EXCLUDED.revoked_at WHERE oauth_families.revoked_at IS NULL`,
      [grant.familyId, grant.clientHash, grant.apiKeyId, now.toISOString(), until.toISOString()],
    );
  }

  /** Whether the family is live (not revoked, not expired) and stands for that API key. */
  async familyActive(familyId: string, apiKeyId: string, now: Date): Promise<boolean> {
    const rows = await this.sql.query<{ live: boolean }>(
      'SELECT true AS live FROM oauth_families WHERE family_id = $1::uuid AND api_key_id = $2::uuid AND revoked_at IS NULL AND expires_at > $3::timestamptz',
      [familyId, apiKeyId, now.toISOString()],
    );
    return rows.length === 1;
  }
}
