/**
 * The owner's analytics over a real store: search events and feedback written with
 * known timestamps (some just outside the window, some on its day boundaries), and
 * the report's exact counts, zero-filled days, shares, coverage gaps and feedback
 * per record; and the retention purge, which deletes only rows past the window.
 * The same suite runs on PGlite (the local runtime) and through the Data API
 * adapter against its PGlite-backed stand-in (the AWS runtime's statements).
 */
import { randomUUID } from 'node:crypto';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyticsReport, purgeSearchEvents } from '../../lambdas/analytics/search-analytics.ts';
import { DirectSearchEvents } from '../../lambdas/retrieval/search-events.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { memoryStore } from '../support/store.ts';
import { moveRecord } from '../../lambdas/records/record-move.ts';
import { runAdminCommand, type AnalyticsResult } from '../../lambdas/admin/admin-operations.ts';
import { startDataApiFixture } from '../support/data-api-fixture.ts';

interface Store {
  sql: Sql;
  close(): Promise<void>;
}

async function pgliteStore(): Promise<Store> {
  const { sql } = await memoryStore();
  return { sql, close: () => sql.close() };
}

/** Only the two records the feedback names: every statement of an import is a request here. */
async function dataApiStore(): Promise<Store> {
  const fixture = await startDataApiFixture();
  const client = new RDSDataClient({ endpoint: fixture.endpoint, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' }, maxAttempts: 1 });
  const arns = { resourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:c', secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:s' };
  const sql = new DataApiSql({ client, ...arns, database: 'chatctx' });
  await migrate(sql);
  const records = (await readRecordFiles(STARTER_CORPUS_DIR)).filter((r) => r.slug === KEYS || r.slug === PAGINATION);
  await importRecords(sql, records, { approve: true });
  return {
    sql,
    close: async () => {
      client.destroy();
      await fixture.close();
    },
  };
}

let store: Store;
const NOW = new Date('2026-03-10T15:00:00.000Z');
const HASH = 'query-hash-that-must-never-be-shown';
const KEYS = 'use-stable-keys-for-dynamic-react-lists';
const PAGINATION = 'use-keyset-pagination-instead-of-large-offset';

interface EventSpec {
  mode: 'hybrid' | 'keyword_fallback' | 'no_match';
  technologies?: string[];
  topics?: string[];
  degraded?: boolean;
  /** The ids of the collections searched. @default public only */
  collections?: number[];
  /** The ids of the records returned. */
  results?: string[];
}

async function searchEvent(at: string, e: EventSpec): Promise<void> {
  await store.sql.query(
    `INSERT INTO search_events (query_hash, topics, technologies, mode, result_count, degraded, created_at, collections, result_ids)
     VALUES ($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)), ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), $4, $5, $6, $7::timestamptz,
             ARRAY(SELECT jsonb_array_elements_text($8::jsonb)::int), ARRAY(SELECT jsonb_array_elements_text($9::jsonb)::uuid))`,
    [
      HASH,
      JSON.stringify(e.topics ?? []),
      JSON.stringify(e.technologies ?? []),
      e.mode,
      e.mode === 'no_match' ? 0 : 2,
      e.degraded ?? false,
      at,
      JSON.stringify(e.collections ?? [1]),
      JSON.stringify(e.results ?? []),
    ],
  );
}

async function feedback(at: string, category: string, ref: string | null): Promise<void> {
  await store.sql.query(
    `INSERT INTO feedback (id, category, record_ref, source, comment, created_at) VALUES ($1::uuid, $2, $3, 'agent', NULL, $4::timestamptz)`,
    [randomUUID(), category, ref, at],
  );
}

async function idOf(slug: string): Promise<string> {
  const [row] = await store.sql.query<{ id: string }>('SELECT id::text AS id FROM records WHERE slug = $1', [slug]);
  return row!.id;
}

async function writeTraces(): Promise<void> {
  await searchEvent('2025-11-01T00:00:00.000Z', { mode: 'no_match', technologies: ['Elixir'] }); // long gone
  await searchEvent('2026-03-03T23:59:59.999Z', { mode: 'no_match', technologies: ['Elixir'] }); // just before the window
  await searchEvent('2026-03-04T00:00:00.000Z', { mode: 'hybrid', technologies: ['React'] }); // first moment of the window
  await searchEvent('2026-03-04T12:00:00.000Z', { mode: 'keyword_fallback', topics: ['performance'], degraded: true });
  await searchEvent('2026-03-06T08:00:00.000Z', { mode: 'no_match', technologies: ['Elixir'], topics: ['data'] });
  await searchEvent('2026-03-06T09:00:00.000Z', { mode: 'no_match', technologies: ['elixir', 'Phoenix'] });
  await searchEvent('2026-03-06T10:00:00.000Z', { mode: 'hybrid', technologies: ['Elixir'] });
  await searchEvent('2026-03-08T20:00:00.000Z', { mode: 'no_match', technologies: ['Ash'], topics: ['data'] });
  await searchEvent('2026-03-10T23:59:59.999Z', { mode: 'hybrid' }); // last moment of today
  await searchEvent('2026-03-11T00:00:00.000Z', { mode: 'hybrid' }); // tomorrow

  await feedback('2026-03-02T10:00:00.000Z', 'helpful', KEYS); // before the window
  await feedback('2026-03-04T00:00:00.000Z', 'helpful', KEYS);
  await feedback('2026-03-05T10:00:00.000Z', 'helpful', KEYS);
  await feedback('2026-03-05T11:00:00.000Z', 'outdated', await idOf(KEYS));
  await feedback('2026-03-07T11:00:00.000Z', 'incorrect', await idOf(PAGINATION));
  await feedback('2026-03-09T11:00:00.000Z', 'missing', 'no-such-record');
  await feedback('2026-03-10T11:00:00.000Z', 'other', null);
}

describe.each([
  ['PGlite', pgliteStore],
  ['the RDS Data API', dataApiStore],
])('on %s', (_name, open) => {
  beforeAll(async () => {
    store = await open();
    await writeTraces();
  }, 300_000);

  afterAll(async () => {
    await store?.close();
  });

  describe('analyticsReport', () => {
    it('counts searches per UTC day and mode, every day of the window zero-filled, oldest first', async () => {
      const report = await analyticsReport(store.sql, { days: 7, now: NOW });
      expect(report.days).toBe(7);
      expect(report.since).toBe('2026-03-04T00:00:00.000Z');
      expect(report.searches).toBe(7);
      const zero = { searches: 0, hybrid: 0, keyword_fallback: 0, no_match: 0, degraded: 0 };
      expect(report.per_day).toEqual([
        { day: '2026-03-04', searches: 2, hybrid: 1, keyword_fallback: 1, no_match: 0, degraded: 1 },
        { day: '2026-03-05', ...zero },
        { day: '2026-03-06', searches: 3, hybrid: 1, keyword_fallback: 0, no_match: 2, degraded: 0 },
        { day: '2026-03-07', ...zero },
        { day: '2026-03-08', searches: 1, hybrid: 0, keyword_fallback: 0, no_match: 1, degraded: 0 },
        { day: '2026-03-09', ...zero },
        { day: '2026-03-10', searches: 1, hybrid: 1, keyword_fallback: 0, no_match: 0, degraded: 0 },
      ]);
      expect(report.modes).toEqual({
        hybrid: { count: 3, share: 0.429 },
        keyword_fallback: { count: 1, share: 0.143 },
        no_match: { count: 3, share: 0.429 },
      });
      expect(report.degraded_rate).toBe(0.143);
    });

    it('names the technologies and topics asked about without a match, case-insensitively, worst first', async () => {
      const report = await analyticsReport(store.sql, { days: 7, now: NOW });
      expect(report.coverage_gaps).toEqual({
        technologies: [
          { name: 'Elixir', no_match: 2, searches: 3 },
          { name: 'Ash', no_match: 1, searches: 1 },
          { name: 'Phoenix', no_match: 1, searches: 1 },
        ],
        topics: [{ name: 'data', no_match: 2, searches: 2 }],
      });
    });

    it('counts feedback per category (every category) and per record, resolving ids to slugs', async () => {
      const report = await analyticsReport(store.sql, { days: 7, now: NOW });
      const none = { helpful: 0, not_helpful: 0, incorrect: 0, outdated: 0, missing: 0, other: 0 };
      expect(report.feedback).toEqual({
        total: 6,
        by_category: { ...none, helpful: 2, outdated: 1, incorrect: 1, missing: 1, other: 1 },
        by_record: [
          { record: KEYS, title: expect.stringMatching(/key/i), counts: { ...none, helpful: 2, outdated: 1 }, total: 3 },
          { record: 'no-such-record', title: null, counts: { ...none, missing: 1 }, total: 1 },
          { record: PAGINATION, title: expect.stringMatching(/pagination/i), counts: { ...none, incorrect: 1 }, total: 1 },
        ],
      });
    });

    it('never shows the query hash', async () => {
      const report = await analyticsReport(store.sql, { days: 3650, now: NOW });
      expect(report.searches).toBe(9);
      expect(JSON.stringify(report)).not.toContain(HASH);
    });

    it('reports an empty window as zeros, not as missing numbers', async () => {
      const report = await analyticsReport(store.sql, { days: 2, now: new Date('2030-01-01T00:00:00.000Z') });
      expect(report).toEqual({
        days: 2,
        collection: null,
        since: '2029-12-31T00:00:00.000Z',
        searches: 0,
        per_day: ['2029-12-31', '2030-01-01'].map((day) => ({ day, searches: 0, hybrid: 0, keyword_fallback: 0, no_match: 0, degraded: 0 })),
        modes: { hybrid: { count: 0, share: 0 }, keyword_fallback: { count: 0, share: 0 }, no_match: { count: 0, share: 0 } },
        degraded_rate: 0,
        coverage_gaps: { technologies: [], topics: [] },
        top_records: [],
        feedback: { total: 0, by_category: { helpful: 0, not_helpful: 0, incorrect: 0, outdated: 0, missing: 0, other: 0 }, by_record: [] },
        per_collection: [],
      });
    });

    it('shows the ten worst gaps and the twenty records with the most feedback', async () => {
      const day = '2031-05-05T12:00:00.000Z';
      const names = Array.from({ length: 12 }, (_, i) => `tech-${String(i).padStart(2, '0')}`);
      await searchEvent(day, { mode: 'no_match', technologies: names });
      await searchEvent(day, { mode: 'no_match', technologies: ['tech-11'] });
      for (let i = 0; i < 22; i++) await feedback(day, 'helpful', `ref-${String(i).padStart(2, '0')}`);
      await feedback(day, 'not_helpful', 'ref-21');
      const report = await analyticsReport(store.sql, { days: 1, now: new Date(day) });
      expect(report.coverage_gaps.technologies.map((g) => g.name)).toEqual(['tech-11', ...names.slice(0, 9)]);
      expect(report.feedback.by_record.map((r) => r.record)).toEqual(['ref-21', ...Array.from({ length: 19 }, (_, i) => `ref-${String(i).padStart(2, '0')}`)]);
      expect(report.feedback.total).toBe(23);
    });
  });

  describe('the records most shown', () => {
    it('writes the ids a search returned through the event writer, and counts the searches that showed each record', async () => {
      const writer = new DirectSearchEvents(store.sql, { info() {}, warn() {}, error() {} });
      const [keys, pagination] = [await idOf(KEYS), await idOf(PAGINATION)];
      const event = (ids: string[]) => ({ query_hash: 'h', topics: [], technologies: [], mode: 'hybrid', result_count: ids.length, degraded: false, result_ids: ids });
      await writer.record(event([pagination, keys]));
      await writer.record(event([keys]));
      await writer.record(event([]));
      await writer.record(event([randomUUID()])); // a record since deleted
      const [stored] = await store.sql.query<{ ids: string[] }>('SELECT result_ids::text[] AS ids FROM search_events ORDER BY id DESC OFFSET 3 LIMIT 1');
      expect(stored!.ids).toEqual([pagination, keys]);
      const report = await analyticsReport(store.sql, { days: 1 });
      expect(report.top_records).toEqual([
        { slug: KEYS, title: expect.stringMatching(/key/i), shown: 2 },
        { slug: PAGINATION, title: expect.stringMatching(/pagination/i), shown: 1 },
      ]);
      await store.sql.query("DELETE FROM search_events WHERE query_hash = 'h'");
    });
  });

  describe('per collection', () => {
    const DAY = '2032-07-07T12:00:00.000Z';
    const at = new Date(DAY);
    it('counts only the searches whose collection set holds the collection, feedback about its records, and searches per collection by name', async () => {
      const [row] = await store.sql.query<{ id: number }>("INSERT INTO collections (name) VALUES ('support') RETURNING id");
      const support = Number(row!.id);
      await moveRecord(store.sql, { record: PAGINATION, to: 'support', reviewer: 'owner', reason: 'internal runbook from now on' });
      const [keys, pagination] = [await idOf(KEYS), await idOf(PAGINATION)];
      await searchEvent(DAY, { mode: 'hybrid', collections: [1, support], results: [pagination, keys] });
      await searchEvent(DAY, { mode: 'no_match', collections: [1, support], technologies: ['Erlang'] });
      await searchEvent(DAY, { mode: 'hybrid', collections: [1], results: [keys] });
      await searchEvent(DAY, { mode: 'no_match', collections: [1], technologies: ['Cobol'] });
      await feedback(DAY, 'incorrect', PAGINATION);
      await feedback(DAY, 'helpful', KEYS);
      await feedback(DAY, 'missing', null);

      const all = await analyticsReport(store.sql, { days: 1, now: at });
      expect(all.searches).toBe(4);
      expect(all.per_collection).toEqual([
        { collection: 'public', searches: 4, no_match: 2 },
        { collection: 'support', searches: 2, no_match: 1 },
      ]);
      expect(all.feedback.total).toBe(3);

      const report = await analyticsReport(store.sql, { days: 1, now: at, collection: { id: support, name: 'support' } });
      expect(report.collection).toBe('support');
      expect(report.searches).toBe(2);
      expect(report.modes.no_match.count).toBe(1);
      expect(report.coverage_gaps.technologies.map((g) => g.name)).toEqual(['Erlang']);
      expect(report.top_records.map((r) => r.slug)).toEqual([PAGINATION]);
      expect(report.feedback.total).toBe(1);
      expect(report.feedback.by_record.map((r) => r.record)).toEqual([PAGINATION]);
      expect(report.per_collection.map((c) => c.collection)).toEqual(['public', 'support']);
    });

    it('runs from the admin operation by collection name, the evidence of that collection\'s records only', async () => {
      const deps = { sql: store.sql, secrets: { pepper: async () => Buffer.alloc(32) }, searchEventRetentionDays: 36500 };
      const report = (await runAdminCommand(deps, { op: 'analytics.report', days: 1, collection: 'support' })) as AnalyticsResult;
      expect(report.collection).toBe('support');
      const evidence = Object.values(report.evidence).reduce((sum, n) => sum + n, 0);
      const everywhere = (await runAdminCommand(deps, { op: 'analytics.report', days: 1 })) as AnalyticsResult;
      expect(Object.values(everywhere.evidence).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(evidence);
      await expect(runAdminCommand(deps, { op: 'analytics.report', collection: 'nowhere' })).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('purgeSearchEvents', () => {
    it('deletes only the events older than the retention window, and says how many', async () => {
      const count = async () => (await store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM search_events'))[0]!.n;
      const cutoff = '2025-12-10T15:00:00.000Z'; // 90 days before NOW
      await searchEvent(cutoff, { mode: 'hybrid' });
      await searchEvent('2025-12-10T14:59:59.999Z', { mode: 'hybrid' });
      const before = await count();
      expect(await purgeSearchEvents(store.sql, 90, NOW)).toBe(2);
      expect(await count()).toBe(before - 2);
      const [oldest] = await store.sql.query<{ at: string }>('SELECT min(created_at) AS at FROM search_events');
      expect(oldest!.at).toBe(cutoff);
      expect(await purgeSearchEvents(store.sql, 90, NOW)).toBe(0);
      const report = await analyticsReport(store.sql, { days: 7, now: NOW });
      expect(report.searches).toBe(7);
    });
  });
});

describe('retention on AWS: the search function\'s event writer', () => {
  it('deletes events past the retention with its first write, then not again within the day', async () => {
    const { sql, logger, logs } = await memoryStore({ starterCorpus: false });
    const old = new Date(Date.now() - 200 * 86_400_000).toISOString();
    const insertOld = () =>
      sql.query("INSERT INTO search_events (query_hash, mode, result_count, degraded, created_at) VALUES ('h', 'hybrid', 1, false, $1::timestamptz)", [old]);
    await insertOld();
    const writer = new DirectSearchEvents(sql, logger, 90);
    const event = { query_hash: 'q', topics: [], technologies: [], mode: 'no_match', result_count: 0, degraded: false, result_ids: [] };
    await writer.record(event);
    const count = async () => (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM search_events'))[0]!.n;
    expect(await count()).toBe(1); // the old event went, the new one stays
    expect(logs.some((line) => /"event":"search_events_purged".*"purged":1/.test(line))).toBe(true);
    await insertOld();
    await writer.record(event);
    expect(await count()).toBe(3); // within the day: no second purge
    await sql.close();
  });
});
