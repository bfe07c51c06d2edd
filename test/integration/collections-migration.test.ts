/**
 * Migration 012 (collections) on a store that existed before it: a store at 011,
 * filled the way the previous release filled it (records, their BM25 rows and
 * store-wide statistics, passages, a key, a search event), moves to `public` whole,
 * and the new retrieval statement, asked for `public`, answers exactly what the
 * previous statement (still there for functions of the previous release during a
 * deploy) answers on the same rows: the per-collection statistics are the old ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { loadMigrations, migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { FIELD_WEIGHTS } from '../../lambdas/records/bm25-index.ts';

let sql: PgliteSql;
const QUESTIONS = [
  'retry with exponential backoff and jitter',
  'React list items keep the wrong state after reordering',
  'store passwords safely',
  'postgres pagination is slow on large offsets',
  'focus management for a modal dialog',
  'zzqx nothing matches this',
];

const WEIGHT = `CASE w WHEN 'A' THEN ${FIELD_WEIGHTS.A} WHEN 'B' THEN ${FIELD_WEIGHTS.B} WHEN 'C' THEN ${FIELD_WEIGHTS.C} ELSE ${FIELD_WEIGHTS.D} END`;

/** The previous release's index upkeep for a whole store: store-wide statistics, no collections. */
async function indexAsBefore(): Promise<void> {
  await sql.query(
    `WITH fields AS (
            SELECT r.id AS record_id, u.lexeme, (SELECT sum(${WEIGHT}) FROM unnest(u.weights) w) AS tf FROM records r, unnest(r.search_vector) u
            UNION ALL
            SELECT r.id, u.lexeme, ${FIELD_WEIGHTS.asked} * cardinality(u.positions) FROM records r, unnest(r.asked_vector) u),
          terms AS (SELECT record_id, lexeme, sum(tf) AS tf FROM fields GROUP BY record_id, lexeme),
          lens AS (SELECT record_id, sum(tf) AS dl FROM terms GROUP BY record_id),
          ins AS (INSERT INTO record_terms (lexeme, record_id, tf, doc_len) SELECT t.lexeme, t.record_id, t.tf, l.dl FROM terms t JOIN lens l USING (record_id) RETURNING lexeme),
          inc AS (INSERT INTO term_stats (lexeme, df) SELECT lexeme, count(*) FROM ins GROUP BY lexeme RETURNING 1)
     UPDATE corpus_stats SET n = (SELECT count(*) FROM lens), total_len = (SELECT sum(dl) FROM lens) WHERE id = 1`,
  );
  await sql.query('SELECT chatctx_index_phrasings(ARRAY(SELECT id FROM records))');
  await sql.query('SELECT chatctx_refresh_phrase_masses()');
}

/** Every number to 10 significant digits. */
const rounded = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (_key, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(10)) : v));

/** A deterministic unit-length vector per record, so the dense side has something to order. */
const vectorFor = (i: number) => {
  const v = Array.from({ length: 512 }, (_, d) => Math.sin(i * 7.1 + d * 0.37));
  const norm = Math.hypot(...v);
  return `[${v.map((x) => (x / norm).toFixed(6)).join(',')}]`;
};

beforeAll(async () => {
  sql = await PgliteSql.open();
  const all = await loadMigrations();
  await migrate(sql, all.filter((m) => m.version < '012'));
  const records = await readRecordFiles(STARTER_CORPUS_DIR);
  const rows = records.map((r, i) => ({
    id: randomUUID(), slug: r.slug, title: r.title, topic: r.topic, summary: r.summary ?? null, recommendation: r.recommendation,
    rationale: r.rationale ?? null, conditions: r.conditions, pitfalls: r.pitfalls, asked_as: r.asked_as ?? [], confidence: r.confidence, vector: vectorFor(i),
  }));
  await sql.query(
    `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, slug text, title text, topic text, summary text, recommendation text,
                  rationale text, conditions jsonb, pitfalls jsonb, asked_as jsonb, confidence text, vector text)),
          ins AS (INSERT INTO records (id, slug, status, title, topic, summary, recommendation, rationale, conditions, pitfalls, asked_as, confidence, content_hash, approved_at)
                  SELECT id, slug, 'approved', title, topic, summary, recommendation, rationale, conditions, pitfalls, asked_as, confidence, 'h', now() FROM x RETURNING id)
     INSERT INTO record_passages (record_id, passage, embedding) SELECT x.id, 0, x.vector::vector FROM x JOIN ins USING (id)`,
    [JSON.stringify(rows)],
  );
  await indexAsBefore();
  await sql.query("INSERT INTO api_keys (id, name, key_hash) VALUES ($1::uuid, 'before', 'hash')", [randomUUID()]);
  await sql.query("INSERT INTO search_events (query_hash, mode, result_count, degraded) VALUES ('q', 'hybrid', 1, false)");
  expect(await migrate(sql)).toEqual(['012_collections', '013_vector_index_at_every_size', '014_inline_passage_vectors', '015_keyword_pruning', '016_resident_keyword_index']);
});

afterAll(async () => {
  await sql.close();
});

describe('migration 012 on an existing store', () => {
  it('puts every record, passage, index row, key and search event in public', async () => {
    const [row] = await sql.query<{ records: number; terms: number; passages: number; keys: string; feedback: boolean; events: string }>(
      `SELECT (SELECT count(*)::int FROM records WHERE collection_id <> 1) AS records,
              (SELECT count(*)::int FROM record_terms WHERE collection_id <> 1) AS terms,
              (SELECT count(*)::int FROM record_passages WHERE collection_id <> 1) AS passages,
              (SELECT collections::text FROM api_keys) AS keys, (SELECT may_submit_feedback FROM api_keys) AS feedback,
              (SELECT collections::text FROM search_events) AS events`,
    );
    expect(row).toEqual({ records: 0, terms: 0, passages: 0, keys: '{1}', feedback: true, events: '{1}' });
  });

  it("carries the store's statistics over to public unchanged", async () => {
    const [stats] = await sql.query<{ same: boolean }>(
      `SELECT (SELECT n FROM corpus_stats) = (SELECT n FROM collection_stats WHERE collection_id = 1)
          AND abs((SELECT total_len FROM corpus_stats) - (SELECT total_len FROM collection_stats WHERE collection_id = 1)) < 1e-6 AS same`,
    );
    expect(stats!.same).toBe(true);
    const [diff] = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         (SELECT lexeme, df FROM term_stats WHERE df > 0 EXCEPT SELECT lexeme, df FROM collection_term_stats WHERE collection_id = 1)
         UNION ALL
         (SELECT lexeme, df FROM collection_term_stats WHERE collection_id = 1 EXCEPT SELECT lexeme, df FROM term_stats)) d`,
    );
    expect(diff!.n).toBe(0);
  });

  it('answers every question, keyword and dense side, as the previous statement does', async () => {
    for (const [i, question] of QUESTIONS.entries()) {
      const groups = JSON.stringify([{ text: question, weight: 1 }]);
      const before = await sql.query<{ kind: string; id: string | null; score: number | null; detail: unknown }>(
        'SELECT * FROM chatctx_candidates($1, $2::jsonb, $3::vector, NULL, NULL, 50, 40, 0.9, 0.4, true) ORDER BY kind, id',
        [question, groups, vectorFor(1000 + i)],
        { json: ['detail'] },
      );
      const after = await sql.query<{ kind: string; id: string | null; score: number | null; detail: unknown }>(
        'SELECT * FROM chatctx_candidates($1, $2::jsonb, $3::vector, NULL, NULL, ARRAY[1], 50, 40, 0.9, 0.4, true) ORDER BY kind, id',
        [question, groups, vectorFor(1000 + i)],
        { json: ['detail'] },
      );
      expect(after.map((r) => [r.kind, r.id]), question).toEqual(before.map((r) => [r.kind, r.id]));
      after.forEach((r, j) => {
        if (r.score !== null) expect(Number(r.score)).toBeCloseTo(Number(before[j]!.score), 9);
      });
      // The same numbers up to the order floating-point sums were taken in.
      expect(rounded(after.map((r) => r.detail))).toEqual(rounded(before.map((r) => r.detail)));
    }
  });
});
