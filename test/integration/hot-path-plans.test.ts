/**
 * The hot paths reach rows through their indexes, not by reading every record:
 * with 5,000 records stored (and ANALYZE run), the plan of every statement that
 * get_guidance (by slug and by id), an import (lookup, rewrite, status change,
 * snapshot, child deletes, BM25 upkeep, superseding, the records to embed),
 * deprecate, approve (with the gates' neighbour search), record history and
 * feedback run holds no sequential scan of `records` or of the
 * per-record tables. A sequential scan there makes the call's cost grow with the
 * corpus: get_guidance slows down, and an import turns quadratic.
 *
 * The statements checked are exactly the ones the code runs: the functions run
 * through a `Sql` that records each statement with its parameters, and each is
 * then explained with those parameters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migratedStore } from '../support/store.ts';
import type { QueryOptions, Sql, SqlParam } from '../../lambdas/ports/sql.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import { reindexRecords } from '../../lambdas/records/bm25-index.ts';
import { deprecateRecords } from '../../lambdas/records/record-review.ts';
import { gateReports, reviewableRecords } from '../../lambdas/records/record-approval.ts';
import { recordHistory } from '../../lambdas/records/record-history.ts';
import { storeFeedback } from '../../lambdas/feedback/feedback-repository.ts';
import { recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

const STORED = 5000;
/** Tables whose size grows with the corpus: reading one whole on every call is what this test forbids. */
const PER_RECORD_TABLES = ['records', 'record_applies_to', 'record_sources', 'record_terms', 'record_history'];

interface Statement {
  readonly text: string;
  readonly params: readonly SqlParam[];
}

/** A `Sql` that runs every statement on `inner` and keeps it, with its parameters, in `seen`. */
class RecordingSql implements Sql {
  constructor(
    private readonly inner: Sql,
    readonly seen: Statement[] = [],
  ) {}

  query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options?: QueryOptions): Promise<Row[]> {
    this.seen.push({ text, params });
    return this.inner.query<Row>(text, params, options);
  }

  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.inner.transaction((tx) => work(new RecordingSql(tx, this.seen)));
  }
}

let sql: PgliteSql;
const ids: string[] = [];

/** 5,000 approved records with applicability, sources, a history row and BM25 terms, written set-based. */
async function loadRecords(): Promise<void> {
  await sql.query(
    `INSERT INTO records (id, slug, status, title, topic, recommendation, summary, confidence, content_hash, approved_at)
     SELECT md5('record ' || g)::uuid, 'generated-record-' || g, 'approved',
            'Generated guidance number ' || g || ' about ' || (ARRAY['pools', 'caches', 'queues', 'indexes', 'retries'])[1 + g % 5],
            'reliability', 'Prefer option ' || (g % 97) || ' over option ' || (g % 89) || ' when the load is ' || (g % 13) || '.',
            'Summary ' || md5(g::text), 'high', md5('hash ' || g), now()
       FROM generate_series(1, ${STORED}) g`,
  );
  await sql.query(
    `INSERT INTO record_applies_to (record_id, position, kind, name) SELECT id, 0, 'runtime', 'Node.js' FROM records`,
  );
  await sql.query(
    `INSERT INTO record_sources (record_id, position, title, url, relation)
     SELECT id, 0, 'Docs', 'https://example.org/' || slug, 'supports' FROM records`,
  );
  await sql.query(
    `INSERT INTO record_history (record_id, content_version, snapshot) SELECT id, 1, to_jsonb(r) - 'search_vector' FROM records r`,
  );
  const rows = await sql.query<{ id: string }>('SELECT id::text AS id FROM records ORDER BY slug');
  ids.push(...rows.map((r) => r.id));
  await reindexRecords(sql, ids);
}

const record = (slug: string, overrides: Record<string, unknown> = {}) => ({
  slug,
  title: `Close database pools on shutdown (${slug})`,
  topic: 'reliability',
  summary: 'Deploys hang because open database pool connections keep the process alive.',
  recommendation: 'Call pool.end() from the shutdown handler after the HTTP server stops accepting requests.',
  applies_to: [{ kind: 'runtime', name: 'Node.js' }],
  confidence: 'high',
  reviewed_at: '2026-11-01',
  sources: [{ title: 'Process', url: 'https://nodejs.org/api/process.html' }],
  ...overrides,
});
const files = (items: Record<string, unknown>[]) => validateRecords(items, (i) => `record ${i + 1}`);

beforeAll(async () => {
  sql = await migratedStore(false);
  await loadRecords();
  // Records imported the ordinary way, with their files: a candidate to approve, approved ones to change.
  await importRecords(sql, await files([record('pool-candidate')]), { approve: false });
  await importRecords(sql, await files([record('pool-approved'), record('pool-retired')]), { approve: true });
  await sql.query('ANALYZE');
}, 300_000);

afterAll(async () => {
  await sql?.close();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function fullScans(node: PlanNode): string[] {
  const here = node['Node Type'] === 'Seq Scan' && PER_RECORD_TABLES.includes(node['Relation Name'] ?? '') ? [node['Relation Name']!] : [];
  return [...here, ...(node.Plans ?? []).flatMap(fullScans)];
}

/** Each statement `work` ran that reads a per-record table whole, with the tables it reads whole. */
async function scansOf(work: (recording: Sql) => Promise<unknown>): Promise<{ statement: string; tables: string[] }[]> {
  const recording = new RecordingSql(sql);
  await work(recording);
  expect(recording.seen.length).toBeGreaterThan(0);
  const found = [];
  for (const { text, params } of recording.seen) {
    const { rows } = await sql.db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, [...params]);
    const [row] = rows;
    const tables = fullScans(row!['QUERY PLAN'][0].Plan);
    if (tables.length > 0) found.push({ statement: text.replace(/\s+/g, ' ').slice(0, 160), tables });
  }
  return found;
}

describe(`hot paths with ${STORED} records use their indexes`, () => {
  it('get_guidance by slugs and by ids, including unknown and deprecated ones', async () => {
    const scans = await scansOf(async (recording) => {
      const tools = createToolHandlers({ sql: recording, secrets: { pepper: async () => randomBytes(32) }, logger: createLogger(() => undefined) });
      const out = await tools.get_guidance({ ids: ['generated-record-17', ids[42]!, 'no-such-record', '00000000-0000-4000-8000-000000000000'] });
      expect((out.structuredContent as { results: unknown[] }).results).toHaveLength(2);
    });
    expect(scans).toEqual([]);
  });

  it('an import that creates, rewrites, supersedes and stages records', async () => {
    const scans = await scansOf(async (recording) => {
      const changed = record('pool-approved', { recommendation: 'Call pool.end() once server.close() has resolved, then exit.' });
      const successor = record('pool-successor', { supersedes: ['pool-retired'] });
      const summary = await importRecords(recording, await files([record('pool-new'), changed, successor]), { approve: true });
      // What the import then hands to the embedder: the changed records only.
      expect(await recordsToEmbed(recording, 'any-model', { ids: summary.changed_ids })).toHaveLength(3);
      const staged = record('pool-approved', { recommendation: 'Call pool.end() after the last request has finished.' });
      expect(await importRecords(recording, await files([staged]), { approve: false })).toMatchObject({ staged: 1 });
    });
    expect(scans).toEqual([]);
  });

  it('approving stored records: the lookup, the gates and the approval', async () => {
    const scans = await scansOf(async (recording) => {
      const found = await reviewableRecords(recording, ['pool-candidate', ids[7]!]);
      expect(found).toHaveLength(2);
      const candidate = found.filter((f) => f.row.status === 'candidate').map((f) => f.record!);
      await gateReports(recording, candidate, { freshnessWarnMonths: 12, freshnessFailMonths: 24, excerptMaxWords: 50, defaultLicense: null, evidenceCheckDays: 30 });
      expect(await importRecords(recording, candidate, { approve: true })).toMatchObject({ approved: 1 });
    });
    expect(scans).toEqual([]);
  });

  it('deprecating records by slug and id with a successor', async () => {
    const scans = await scansOf(async (recording) => {
      const changed = await deprecateRecords(recording, ['generated-record-5', ids[9]!], { supersededBy: 'generated-record-6' });
      expect(changed).toHaveLength(2);
    });
    expect(scans).toEqual([]);
  });

  it('record history and feedback about a record', async () => {
    const scans = await scansOf(async (recording) => {
      await recordHistory(recording, ids[100]!);
      await recordHistory(recording, 'generated-record-100');
      await storeFeedback(recording, { category: 'helpful', record: ids[101]!, source: 'get_guidance' }, { scope: GUEST_SCOPE });
      await storeFeedback(recording, { category: 'helpful', record: 'generated-record-102', source: 'get_guidance' }, { scope: GUEST_SCOPE });
    });
    expect(scans).toEqual([]);
  });
});
