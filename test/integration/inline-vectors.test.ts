/**
 * Migration 014 on a store embedded before it: the passage and query vectors move
 * from the TOAST table into their rows, and the retrieval statement (whose keyword
 * hits' similarities are now read record by record) answers exactly what 013's
 * answered on the same store: the same rows, kinds, ids, scores and details, for
 * questions with and without an embedding, a technology filter, keyword side off,
 * and a keyword hit whose record has no passages yet (it gets no similarity row).
 * The vector indexes, built again by the rewrite, hold live rows only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { loadMigrations, migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { SeededEmbedder, loadSeed } from '../../lambdas/embeddings/embedding-seed.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import type { SqlParam } from '../../lambdas/ports/sql.ts';

let sql: PgliteSql;
const QUESTIONS = [
  'retry with exponential backoff and jitter',
  'React list items keep the wrong state after reordering',
  'store passwords safely',
  'postgres pagination is slow on large offsets',
  'zzqx nothing matches this',
];

/** The starter corpus's shipped vectors only: a text without one is an error, so no encoder loads. */
async function seedOnly(): Promise<Embedder> {
  const refuse: Embedder = {
    provider: 'use-lite',
    model: 'universal-sentence-encoder-lite',
    dimensions: 512,
    embed: async () => {
      throw new Error('not in the seed');
    },
  };
  return new SeededEmbedder(refuse, await loadSeed(refuse.model, refuse.dimensions));
}

/** Every number to 10 significant digits. */
const rounded = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (_key, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(10)) : v));

interface Call {
  query: string;
  vector: string | null;
  technologies: string | null;
  keyword: boolean;
}

/** The question's vector: a passage's own, so the dense side finds something real. */
async function callsFor(): Promise<Call[]> {
  const vectors = await sql.query<{ v: string }>('SELECT embedding::text AS v FROM record_passages ORDER BY record_id, passage LIMIT 5');
  return QUESTIONS.flatMap((query, i) => [
    { query, vector: vectors[i]!.v, technologies: null, keyword: true },
    { query, vector: null, technologies: null, keyword: true },
    { query, vector: vectors[i]!.v, technologies: '["React"]', keyword: true },
    { query, vector: vectors[i]!.v, technologies: null, keyword: false },
  ]);
}

async function answers(calls: Call[]): Promise<unknown[]> {
  const all: unknown[] = [];
  for (const call of calls) {
    const rows = await sql.query(
      `SELECT * FROM chatctx_candidates($1, $2::jsonb, $3::vector, NULL, $4::jsonb, ARRAY[1], 50, 40, 1.2, 0.75, $5::boolean)
        ORDER BY kind, id NULLS FIRST`,
      [call.query, JSON.stringify([{ text: call.query, weight: 1 }]), call.vector, call.technologies, call.keyword] as SqlParam[],
      { json: ['detail'] },
    );
    all.push(rounded(rows));
  }
  return all;
}

/** Rows of the table whose vector is in the TOAST table rather than in the row (0 once 014 moved them). */
async function toasted(table: 'record_passages' | 'embedding_cache'): Promise<number> {
  const [row] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL`);
  return Number(row!.n);
}

let calls: Call[];
let before: unknown[];
let noPassages: string;

beforeAll(async () => {
  sql = await PgliteSql.open();
  const all = await loadMigrations();
  await migrate(sql, all.filter((m) => m.version < '014'));
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  const embedder = await seedOnly();
  await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model));
  await sql.query(`INSERT INTO embedding_cache (cache_key, embedding) SELECT 'k' || passage || record_id, embedding FROM record_passages LIMIT 20`);
  // A keyword hit of the first question whose record has no passages (as before its embedding is written).
  const [row] = await sql.query<{ id: string }>(
    `SELECT k.id FROM chatctx_keyword_search($1, '[]'::jsonb, NULL, ARRAY[1], 50, 1.2, 0.75) k WHERE k.id IS NOT NULL ORDER BY k.score LIMIT 1`,
    [QUESTIONS[0]!],
  );
  noPassages = row!.id;
  await sql.query('DELETE FROM record_passages WHERE record_id = $1::uuid', [noPassages]);
  // Exact nearest passages on both sides: the rewrite builds the vector indexes again,
  // and two HNSW graphs may differ by a near tie; what is compared is everything else.
  await sql.query("SET chatctx.exact_passages = '100000'");
  calls = await callsFor();
  before = await answers(calls);
}, 120_000);

afterAll(async () => {
  await sql?.close();
});

describe('migration 014: vectors in their rows', () => {
  it('finds the vectors of a store embedded before it in the TOAST table', async () => {
    expect(await toasted('record_passages')).toBeGreaterThan(0);
    expect(await toasted('embedding_cache')).toBeGreaterThan(0);
  });

  it('moves every passage and cached query vector into its row, values unchanged', async () => {
    const vectors = `SELECT md5(string_agg(embedding::text, ',' ORDER BY record_id, passage)) AS h FROM record_passages`;
    const [was] = await sql.query<{ h: string }>(vectors);
    expect(await migrate(sql)).toEqual(['014_inline_passage_vectors', '015_keyword_pruning', '016_resident_keyword_index']);
    expect(await toasted('record_passages')).toBe(0);
    expect(await toasted('embedding_cache')).toBe(0);
    const [now] = await sql.query<{ h: string }>(vectors);
    expect(now!.h).toBe(was!.h);
    const storage = await sql.query<{ attstorage: string }>(
      `SELECT attstorage FROM pg_attribute WHERE attname = 'embedding' AND attrelid IN ('record_passages'::regclass, 'embedding_cache'::regclass)`,
    );
    expect(storage.map((s) => s.attstorage)).toEqual(['p', 'p']);
  });

  it('answers every question exactly as the statement before it did', async () => {
    const after = await answers(calls);
    expect(after).toEqual(before);
    // The test saw what it claims to: similarities read for keyword hits, and the record without passages among the hits.
    const first = after[0] as { kind: string; id: string }[];
    expect(first.filter((r) => r.kind === 'similarity').length).toBeGreaterThan(5);
    expect(first.some((r) => r.kind === 'keyword' && r.id === noPassages)).toBe(true);
    expect(first.some((r) => r.kind === 'similarity' && r.id === noPassages)).toBe(false);
  });

  it('builds the vector indexes again over the rewritten rows, so a walk through them finds the nearest passages', async () => {
    const [probe] = await sql.query<{ v: string }>('SELECT embedding::text AS v FROM record_passages ORDER BY record_id, passage OFFSET 7 LIMIT 1');
    await sql.query("SET chatctx.exact_passages = '0'");
    const walked = await sql.query<{ id: string; similarity: number }>('SELECT * FROM chatctx_vector_search($1::vector, NULL, ARRAY[1], 40, 50)', [probe!.v]);
    await sql.query("SET chatctx.exact_passages = '100000'");
    const exact = await sql.query<{ id: string; similarity: number }>('SELECT * FROM chatctx_vector_search($1::vector, NULL, ARRAY[1], 40, 50)', [probe!.v]);
    expect(walked.length).toBeGreaterThan(10);
    expect(walked[0]).toEqual(exact[0]);
    const found = new Set(exact.map((r) => r.id));
    expect(walked.filter((r) => found.has(r.id)).length / walked.length).toBeGreaterThanOrEqual(0.9);
  });

  it('keeps new passages in their rows', async () => {
    await sql.query(`INSERT INTO record_passages (record_id, passage, collection_id, embedding) SELECT $1::uuid, 0, 1, embedding FROM embedding_cache LIMIT 1`, [noPassages]);
    expect(await toasted('record_passages')).toBe(0);
  });
});
