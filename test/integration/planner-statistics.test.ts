/**
 * The local server's start refreshes the planner's statistics only when they may be
 * stale: on a store never analysed, after any change to the corpus (a CLI import
 * while the server was stopped counts), and a week after the last time; a restart of
 * an unchanged store skips the 300 to 400 ms ANALYZE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { analyzeIfStale } from '../../lambdas/local/planner-statistics.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import { migratedStore } from '../support/store.ts';

let sql: PgliteSql;

/** How many times `records` was analysed in this session (the cumulative statistics, flushed first). */
async function analyses(): Promise<number> {
  await sql.query('SELECT pg_stat_force_next_flush()');
  await sql.query('SELECT pg_stat_clear_snapshot()');
  const [row] = await sql.query<{ n: number }>("SELECT analyze_count::int AS n FROM pg_stat_user_tables WHERE relname = 'records'");
  return Number(row!.n);
}

const oneRecord = (slug: string) =>
  validateRecords(
    [{ slug, title: `Record ${slug}`, topic: 'data', recommendation: 'Index the column a hot query filters on.', confidence: 'low', sources: [{ title: 'Docs', url: 'https://www.postgresql.org/docs/' }] }],
    () => slug,
  );

beforeAll(async () => {
  sql = await migratedStore(true);
});

afterAll(async () => {
  await sql?.close();
});

describe('statistics refreshed at start only when they may be stale', () => {
  it('analyses a store that records no analysis, then not again while nothing changed', async () => {
    const before = await analyses();
    expect(await analyzeIfStale(sql)).toBe(true);
    expect(await analyses()).toBe(before + 1);
    expect(await analyzeIfStale(sql)).toBe(false);
    expect(await analyzeIfStale(sql)).toBe(false);
    expect(await analyses()).toBe(before + 1);
  });

  it('analyses again after the corpus changed', async () => {
    const before = await analyses();
    await importRecords(sql, await oneRecord('statistics-after-import'), { approve: true });
    expect(await analyzeIfStale(sql)).toBe(true);
    expect(await analyses()).toBe(before + 1);
    expect(await analyzeIfStale(sql)).toBe(false);
  });

  it('analyses again a week after the last time, changed or not', async () => {
    await sql.query("UPDATE settings SET value = (now() - interval '8 days')::text WHERE key = 'analyzed_at'");
    expect(await analyzeIfStale(sql)).toBe(true);
    expect(await analyzeIfStale(sql)).toBe(false);
  });
});
