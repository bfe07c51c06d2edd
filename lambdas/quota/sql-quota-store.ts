/**
 * `QuotaStore` on the `quota_counters` table: one atomic upsert per call.
 * The conditional `DO UPDATE … WHERE used < limit` makes the check and the count a
 * single statement, so parallel calls can never overshoot the limit.
 */
import type { Sql } from '../ports/sql.ts';
import type { QuotaDecision, QuotaStore } from '../ports/quota-store.ts';

export class SqlQuotaStore implements QuotaStore {
  constructor(private readonly sql: Sql) {}

  async consume(subject: string, day: string, limit: number): Promise<QuotaDecision> {
    if (limit <= 0) return { allowed: false, remaining: 0 };
    const rows = await this.sql.query<{ used: number }>(
      `INSERT INTO quota_counters (subject, day, used) VALUES ($1, $2::date, 1)
       ON CONFLICT (subject, day) DO UPDATE SET used = quota_counters.used + 1
       WHERE quota_counters.used < $3
       RETURNING used`,
      [subject, day, limit],
    );
    const used = rows[0]?.used;
    if (used === undefined) return { allowed: false, remaining: 0 };
    return { allowed: true, remaining: Math.max(0, limit - used) };
  }

  async used(subject: string, day: string): Promise<number> {
    const rows = await this.sql.query<{ used: number }>(
      'SELECT used FROM quota_counters WHERE subject = $1 AND day = $2::date',
      [subject, day],
    );
    return rows[0]?.used ?? 0;
  }

  /** Every counter of one day. */
  counters(day: string): Promise<{ subject: string; used: number }[]> {
    return this.sql.query<{ subject: string; used: number }>('SELECT subject, used FROM quota_counters WHERE day = $1::date', [day]);
  }

  /** Drops counters of past days; they are useless after midnight UTC. */
  async prune(today: string): Promise<void> {
    await this.sql.query('DELETE FROM quota_counters WHERE day < $1::date', [today]);
  }
}
