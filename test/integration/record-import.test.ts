/**
 * Import semantics on the real schema: versions, approval, history, and what the
 * public tools see of candidates and deprecated records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { refreshPhraseMasses } from '../../lambdas/records/bm25-index.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';

let store: MemoryStore;

const base = {
  slug: 'close-database-pools-on-shutdown',
  title: 'Close database pools on shutdown',
  topic: 'reliability',
  summary: 'Deploys hang because open database pool connections keep the process alive.',
  recommendation: 'Call pool.end() from the shutdown handler after the HTTP server stops accepting requests.',
  applies_to: [{ kind: 'runtime', name: 'Node.js' }],
  confidence: 'high',
  sources: [{ title: 'Process', url: 'https://nodejs.org/api/process.html' }],
};
const load = (overrides: Record<string, unknown> = {}) => validateRecords([{ ...base, ...overrides }], () => 'test');
const get = async (ids: string[]) => (await store.tools.get_guidance({ ids })).structuredContent as any;

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
});

afterAll(async () => {
  await store.sql.close();
});

describe('records import', () => {
  it('keeps new records as unpublished candidates until approved', async () => {
    const summary = await importRecords(store.sql, await load(), { approve: false });
    expect(summary).toMatchObject({ created: 1, candidates: 1 });
    expect((await get([base.slug])).missing).toEqual([base.slug]);
  });

  it('publishes on approval and keeps the approved version in history', async () => {
    const summary = await importRecords(store.sql, await load(), { approve: true });
    expect(summary).toMatchObject({ updated: 1, approved: 1 });
    const out = await get([base.slug]);
    expect(out.results[0]).toMatchObject({ status: 'approved', content_version: 1 });
    const history = await store.sql.query('SELECT content_version FROM record_history');
    expect(history).toEqual([{ content_version: 1 }]);
  });

  it('treats an identical re-import as unchanged', async () => {
    expect(await importRecords(store.sql, await load(), { approve: true })).toMatchObject({ unchanged: 1 });
  });

  it('bumps content_version when approved text changes, and searches the new text', async () => {
    await importRecords(store.sql, await load({ recommendation: 'Call pool.end() after server.close() resolves; then exit.' }), { approve: true });
    const out = await get([base.slug]);
    expect(out.results[0].content_version).toBe(2);
    expect(out.results[0].recommendation).toMatch(/server\.close\(\) resolves/);
    const hits = (await store.tools.search_knowledge({ query: 'server.close resolves pool' })).structuredContent as any;
    expect(hits.results.map((r: any) => r.slug)).toContain(base.slug);
    expect((await store.sql.query('SELECT count(*)::int AS n FROM record_history'))[0]).toEqual({ n: 2 });
  });

  it('hides deprecated records from search and get_guidance', async () => {
    await importRecords(store.sql, await load({ recommendation: 'Call pool.end() after server.close() resolves; then exit.', status: 'deprecated' }), { approve: true });
    expect((await get([base.slug])).missing).toEqual([base.slug]);
    const hits = (await store.tools.search_knowledge({ query: 'server.close resolves pool' })).structuredContent as any;
    expect(hits.results).toEqual([]);
    expect(hits.retrieval.mode).toBe('no_match');
  });

  it('rolls back the whole import when one record conflicts', async () => {
    const records = [...(await load({ slug: 'brand-new-record' })), ...(await load({ slug: base.slug, id: '00000000-0000-4000-8000-000000000000' }))];
    await expect(importRecords(store.sql, records, { approve: true })).rejects.toThrow(/another id/);
    expect(await store.sql.query("SELECT slug FROM records WHERE slug = 'brand-new-record'")).toEqual([]);
  });
});

describe('a large import', () => {
  it('refreshes the planner\'s statistics as it grows and the phrasing masses once at its end', async () => {
    // Prepare: a store of its own, migrated and empty; statistics as a new store has them.
    const fresh = await memoryStore({ starterCorpus: false });
    try {
      await fresh.sql.query('ANALYZE');
      const slugs = Array.from({ length: 1_100 }, (_, i) => `generated-pool-record-${i}`);
      const records = await validateRecords(slugs.map((slug, i) => ({ ...base, slug, title: `${base.title} ${i}` })), (i) => `record ${i}`);

      // Act
      const summary = await importRecords(fresh.sql, records, { approve: true });

      // Assess: the planner's row count for records saw the import's first thousand (no ANALYZE ran after it).
      expect(summary.created).toBe(1_100);
      const [stats] = await fresh.sql.query<{ reltuples: number }>("SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'records'");
      expect(Number(stats!.reltuples)).toBeGreaterThanOrEqual(1_000);
      // The phrasing masses, computed once at the import's end, are what a fresh computation gives.
      const masses = () => fresh.sql.query("SELECT record_id::text, phrase, mass::text FROM record_phrase_mass ORDER BY 1, 2");
      const afterImport = await masses();
      expect(afterImport.length).toBeGreaterThanOrEqual(1_100);
      const collections = await fresh.sql.query<{ id: number }>('SELECT DISTINCT collection_id AS id FROM records');
      await fresh.sql.transaction((tx) => refreshPhraseMasses(tx, new Set(collections.map((c) => Number(c.id)))));
      expect(await masses()).toEqual(afterImport);
    } finally {
      await fresh.sql.close();
    }
  }, 300_000);
});

describe('migrations', () => {
  it('are idempotent: a second run applies nothing and keeps the data', async () => {
    expect(await migrate(store.sql)).toEqual([]);
    expect((await store.sql.query('SELECT count(*)::int AS n FROM records'))[0]).toEqual({ n: 1 });
  });
});
