/**
 * API keys in the `api_keys` table: create, list, revoke, set a quota, and
 * resolve a presented key (by its hash) to its id and quota.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import type { Secrets } from '../ports/secrets.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { hashApiKey } from '../privacy/hashing.ts';
import { asUuid } from '../storage/uuid-text.ts';
import { generateApiKey } from './api-keys.ts';
import { GUEST_SCOPE, callerScope, type CallerScope } from './caller-scope.ts';

export interface ApiKeyInfo {
  readonly id: string;
  readonly name: string;
  readonly daily_quota: number | null;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly last_used_at: string | null;
  /** The collection ids the key sees (the admin operations show their names). */
  readonly collections: number[];
  /** Whether the key may call submit_feedback. */
  readonly may_submit_feedback: boolean;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The only time the plaintext exists outside the caller's hands. */
  readonly key: string;
}

export interface ActiveKey {
  readonly id: string;
  readonly dailyQuota: number | null;
  /** What the key sees and may do, as stored now. */
  readonly scope: CallerScope;
}

interface ActiveRow {
  id: string;
  daily_quota: number | null;
  collections: unknown;
  may_submit_feedback: boolean;
}

const activeKey = (row: ActiveRow | undefined): ActiveKey | undefined =>
  row ? { id: row.id, dailyQuota: row.daily_quota, scope: callerScope(row.collections, row.may_submit_feedback) } : undefined;

const KEY_COLUMNS = 'id, name, daily_quota, created_at, revoked_at, last_used_at, to_jsonb(collections) AS collections, may_submit_feedback';
const JSON_COLUMNS = { json: ['collections'] } as const;

export class KeyRepository {
  constructor(
    private readonly sql: Sql,
    private readonly secrets: Secrets,
  ) {}

  /** A new key; `scope` defaults to public only, with feedback (the contract's default). */
  async create(name: string, dailyQuota: number | null, scope: CallerScope = GUEST_SCOPE): Promise<CreatedApiKey> {
    const key = generateApiKey();
    const [row] = await this.sql.query<ApiKeyInfo>(
      `INSERT INTO api_keys (id, name, key_hash, daily_quota, collections, may_submit_feedback)
       VALUES ($1::uuid, $2, $3, $4, ARRAY(SELECT jsonb_array_elements_text($5::jsonb)::int), $6) RETURNING ${KEY_COLUMNS}`,
      [randomUUID(), name, hashApiKey(await this.secrets.pepper(), key), dailyQuota, JSON.stringify(scope.collections), scope.feedback],
      JSON_COLUMNS,
    );
    return { ...row!, key };
  }

  list(): Promise<ApiKeyInfo[]> {
    return this.sql.query<ApiKeyInfo>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`, [], JSON_COLUMNS);
  }

  /** Replaces a key's scopes (revoked keys too: the record stays accurate). Its OAuth tokens follow, as they resolve through the key. */
  setScope(id: string, scope: CallerScope): Promise<ApiKeyInfo> {
    return this.updateOne(
      id,
      `UPDATE api_keys SET collections = ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::int), may_submit_feedback = $3
        WHERE id = $1::uuid RETURNING ${KEY_COLUMNS}`,
      [asUuid(id), JSON.stringify(scope.collections), scope.feedback],
    );
  }

  /** The key with this id (revoked or not), or a `NotFoundError`. */
  async get(id: string): Promise<ApiKeyInfo> {
    return this.updateOne(id, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1::uuid`, [asUuid(id)]);
  }

  /** Revokes a key; `already_revoked` says the key was revoked before (it keeps its first revocation time). */
  async revoke(id: string): Promise<ApiKeyInfo & { already_revoked: boolean }> {
    const [row] = await this.sql.query<ApiKeyInfo & { already_revoked: boolean }>(
      `WITH before AS (SELECT id, revoked_at IS NOT NULL AS already_revoked FROM api_keys WHERE id = $1::uuid)
       UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now()) FROM before WHERE k.id = before.id
       RETURNING k.id, k.name, k.daily_quota, k.created_at, k.revoked_at, k.last_used_at,
                 to_jsonb(k.collections) AS collections, k.may_submit_feedback, before.already_revoked`,
      [asUuid(id)],
      JSON_COLUMNS,
    );
    if (!row) throw new NotFoundError('No API key has that id.', { id });
    return row;
  }

  setDailyQuota(id: string, dailyQuota: number | null): Promise<ApiKeyInfo> {
    return this.updateOne(id, `UPDATE api_keys SET daily_quota = $2 WHERE id = $1::uuid RETURNING ${KEY_COLUMNS}`, [asUuid(id), dailyQuota]);
  }

  /**
   * The active (not revoked) key with this plaintext, or undefined. Its last use is
   * kept to the hour, and written only when the hour changes: a finer stamp could
   * tie a key to an anonymous feedback row written in the same second.
   */
  async resolve(key: string): Promise<ActiveKey | undefined> {
    const rows = await this.sql.query<ActiveRow>(
      `WITH k AS (SELECT id, daily_quota, collections, may_submit_feedback FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL),
            stamp AS (UPDATE api_keys SET last_used_at = date_trunc('hour', now())
                       WHERE id IN (SELECT id FROM k) AND last_used_at IS DISTINCT FROM date_trunc('hour', now()))
       SELECT id::text AS id, daily_quota, to_jsonb(collections) AS collections, may_submit_feedback FROM k`,
      [hashApiKey(await this.secrets.pepper(), key)],
      { json: ['collections'] },
    );
    return activeKey(rows[0]);
  }

  /** The active key with this id, or undefined; its last use is stamped as `resolve` does. Backs OAuth access tokens. */
  async resolveById(id: string): Promise<ActiveKey | undefined> {
    const rows = await this.sql.query<ActiveRow>(
      `WITH k AS (SELECT id, daily_quota, collections, may_submit_feedback FROM api_keys WHERE id = $1::uuid AND revoked_at IS NULL),
            stamp AS (UPDATE api_keys SET last_used_at = date_trunc('hour', now())
                       WHERE id IN (SELECT id FROM k) AND last_used_at IS DISTINCT FROM date_trunc('hour', now()))
       SELECT id::text AS id, daily_quota, to_jsonb(collections) AS collections, may_submit_feedback FROM k`,
      [asUuid(id)],
      { json: ['collections'] },
    );
    return activeKey(rows[0]);
  }

  private async updateOne(id: string, statement: string, params: (string | number | boolean | null)[]): Promise<ApiKeyInfo> {
    const [row] = await this.sql.query<ApiKeyInfo>(statement, params, JSON_COLUMNS);
    if (!row) throw new NotFoundError('No API key has that id.', { id });
    return row;
  }
}
