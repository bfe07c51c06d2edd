/**
 * The planner's statistics on the local store. PGlite has no autovacuum, so nothing
 * else refreshes them (they are kept in the store, like any table); the server
 * refreshes them at start when they may be stale.
 */
import type { Sql } from '../ports/sql.ts';

/** How long statistics of tables a search does not read (events, keys, counters) may age. */
const ANALYZE_AT_LEAST_EVERY = '7 days';

/**
 * ANALYZE when the statistics may be stale; true when it ran. Of the whole store it
 * took 300 to 400 ms of every restart. It runs when the corpus changed since the last
 * one (the generation every change a search can see moves on, even one made by a CLI
 * command while the server was stopped), when the last one is a week old, or when
 * none is recorded (a new store, or one from before this check).
 */
export async function analyzeIfStale(sql: Sql): Promise<boolean> {
  const [state] = await sql.query<{ stale: boolean }>(
    `SELECT coalesce(a.value IS DISTINCT FROM c.generation::text OR t.value::timestamptz < now() - $1::interval, true) AS stale
       FROM corpus_stats c
       LEFT JOIN settings a ON a.key = 'analyzed_generation'
       LEFT JOIN settings t ON t.key = 'analyzed_at'
      WHERE c.id = 1`,
    [ANALYZE_AT_LEAST_EVERY],
  );
  if (state && !state.stale) return false;
  await sql.query('ANALYZE');
  await sql.query(
    `INSERT INTO settings (key, value)
     SELECT 'analyzed_generation', generation::text FROM corpus_stats WHERE id = 1
     UNION ALL SELECT 'analyzed_at', now()::text
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  );
  return true;
}
