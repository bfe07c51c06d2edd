/**
 * API keys in the `api_keys` table: create, list, revoke, set a quota, and
 * resolve a presented key (by its hash) to its id and quota.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { hashApiKey } from '../privacy/hashing.ts';
import { generateApiKey } from './api-keys.ts';

export interface ApiKeyInfo {
  readonly id: string;
  readonly name: string;
  readonly daily_quota: number | null;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly last_used_at: string | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The only time the plaintext exists outside the caller's hands. */
  readonly key: string;
}

export interface ActiveKey {
  readonly id: string;
  readonly dailyQuota: number | null;
}

interface KeyRow {
  id: string;
  name: string;
  daily_quota: number | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const toInfo = (r: KeyRow): ApiKeyInfo => ({
  id: r.id,
  name: r.name,
  daily_quota: r.daily_quota,
  created_at: iso(r.created_at)!,
  revoked_at: iso(r.revoked_at),
  last_used_at: iso(r.last_used_at),
});

export class KeyRepository {
  constructor(
    private readonly sql: Sql,
    private readonly pepper: () => Promise<Buffer>,
  ) {}

  async create(name: string, dailyQuota: number | null): Promise<CreatedApiKey> {
    const key = generateApiKey();
    const id = randomUUID();
    const [row] = await this.sql.query<KeyRow>(
      `INSERT INTO api_keys (id, name, key_hash, daily_quota) VALUES ($1::uuid, $2, $3, $4)
       RETURNING id, name, daily_quota, created_at, revoked_at, last_used_at`,
      [id, name, hashApiKey(await this.pepper(), key), dailyQuota],
    );
    return { ...toInfo(row!), key };
  }

  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.sql.query<KeyRow>(
      'SELECT id, name, daily_quota, created_at, revoked_at, last_used_at FROM api_keys ORDER BY created_at, id',
    );
    return rows.map(toInfo);
  }

  async revoke(id: string): Promise<ApiKeyInfo> {
    const rows = await this.sql.query<KeyRow>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id::text = $1
       RETURNING id, name, daily_quota, created_at, revoked_at, last_used_at`,
      [id],
    );
    if (!rows[0]) throw new NotFoundError('No API key has that id.', { id });
    return toInfo(rows[0]);
  }

  async setDailyQuota(id: string, dailyQuota: number | null): Promise<ApiKeyInfo> {
    const rows = await this.sql.query<KeyRow>(
      `UPDATE api_keys SET daily_quota = $2 WHERE id::text = $1
       RETURNING id, name, daily_quota, created_at, revoked_at, last_used_at`,
      [id, dailyQuota],
    );
    if (!rows[0]) throw new NotFoundError('No API key has that id.', { id });
    return toInfo(rows[0]);
  }

  /** The active (not revoked) key with this plaintext, or undefined. */
  async resolve(key: string): Promise<ActiveKey | undefined> {
    const rows = await this.sql.query<{ id: string; daily_quota: number | null }>(
      `UPDATE api_keys SET last_used_at = now() WHERE key_hash = $1 AND revoked_at IS NULL RETURNING id, daily_quota`,
      [hashApiKey(await this.pepper(), key)],
    );
    const row = rows[0];
    return row ? { id: row.id, dailyQuota: row.daily_quota } : undefined;
  }
}
