/**
 * The dense side among a caller's collections (`chatctx_vector_search`,
 * schema/013_vector_index_at_every_size.sql), on its three paths:
 *
 * - a caller who cannot see every collection (here a key scoped to internal alone),
 *   up to 3,000 visible passages: the exact nearest ones, the same records in the same
 *   order as a brute-force comparison of the visible passages alone, so the passages
 *   of other collections cannot move its candidates;
 * - a guest: the public collection's own HNSW index, whose graph holds public
 *   passages only, never the store's (its scans counted in pg_stat_user_indexes);
 * - a caller who sees every collection: the store's HNSW index, still returning only
 *   visible records and a full pool.
 *
 * (How the choice follows a store's size: test/integration/vector-plan.test.ts.)
 *
 * Vectors are written directly (deterministic, unit length): this is about which rows
 * the statement reads, not about the encoder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migratedStore } from '../support/store.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import { createCollection } from '../../lambdas/records/collections.ts';

let sql: PgliteSql;
let internal = 0;
const PUBLIC_RECORDS = 60;
const PUBLIC_PASSAGES = 5;
const INTERNAL_RECORDS = 70;
const INTERNAL_PASSAGES = 40;

const unit = (seed: number) => {
  const v = Array.from({ length: 512 }, (_, d) => Math.sin(seed * 12.9898 + d * 78.233) * 43758.5453 % 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};
const literal = (v: number[]) => `[${v.map((x) => x.toFixed(6)).join(',')}]`;

const records = (prefix: string, n: number) =>
  validateRecords(
    Array.from({ length: n }, (_, i) => ({
      slug: `${prefix}-record-${i}`,
      title: `${prefix} record ${i}`,
      topic: 'data',
      recommendation: `Guidance ${i} of the ${prefix} set.`,
      confidence: 'low',
      sources: [{ title: 'Docs', url: 'https://www.postgresql.org/docs/' }],
    })),
    (i) => `${prefix} ${i}`,
  );

async function addPassages(prefix: string, perRecord: number, seedBase: number): Promise<void> {
  const rows = await sql.query<{ id: string; collection_id: number }>(`SELECT id::text AS id, collection_id FROM records WHERE slug LIKE $1 ORDER BY slug`, [`${prefix}-%`]);
  const passages = rows.flatMap((r, i) =>
    Array.from({ length: perRecord }, (_, p) => ({ record_id: r.id, passage: p, collection_id: r.collection_id, embedding: literal(unit(seedBase + i * 100 + p)) })),
  );
  for (let start = 0; start < passages.length; start += 500) {
    await sql.query(
      `INSERT INTO record_passages (record_id, passage, collection_id, embedding)
       SELECT (x->>'record_id')::uuid, (x->>'passage')::int, (x->>'collection_id')::int, (x->>'embedding')::vector FROM jsonb_array_elements($1::jsonb) x`,
      [JSON.stringify(passages.slice(start, start + 500))],
    );
  }
}

// Statistics reach pg_stat_user_indexes when the backend flushes them: forced before each read.
async function indexScans(name = 'record_passages_embedding_idx'): Promise<number> {
  await sql.query('SELECT pg_stat_force_next_flush()');
  await sql.query('SELECT pg_stat_clear_snapshot()');
  const [row] = await sql.query<{ n: number }>('SELECT idx_scan::int AS n FROM pg_stat_user_indexes WHERE indexrelname = $1', [name]);
  return Number(row!.n);
}
const PUBLIC_INDEX = 'record_passages_public_embedding_idx';

const nearest = (query: string, collections: number[], limit = 50) =>
  sql.query<{ id: string; similarity: number }>('SELECT * FROM chatctx_vector_search($1::vector, NULL, $2::int[], 40, $3)', [query, `{${collections.join(',')}}`, limit]);

beforeAll(async () => {
  sql = await migratedStore(false);
  internal = (await createCollection(sql, 'internal', null)).id;
  await importRecords(sql, await records('public', PUBLIC_RECORDS), { approve: true });
  await importRecords(sql, await records('internal', INTERNAL_RECORDS), { approve: true, collection: 'internal' });
  await addPassages('public', PUBLIC_PASSAGES, 1);
  await addPassages('internal', INTERNAL_PASSAGES, 1_000_000);
  await sql.query('ANALYZE record_passages');
}, 300_000);

afterAll(async () => {
  await sql?.close();
});

describe('the nearest passages among the caller\'s collections', () => {
  it('are the exact nearest visible ones for a key scoped to internal alone, beside the public collection', async () => {
    for (const seed of [7, 11, 13]) {
      const query = literal(unit(seed * 31_337));
      const before = [await indexScans(), await indexScans(PUBLIC_INDEX)];
      const got = await nearest(query, [internal]);
      expect([await indexScans(), await indexScans(PUBLIC_INDEX)]).toEqual(before);
      const exact = await sql.query<{ id: string }>(
        `SELECT p.record_id::text AS id FROM record_passages p WHERE p.collection_id = $2
          GROUP BY p.record_id ORDER BY max(1 - (p.embedding <=> $1::vector)) DESC, 1 LIMIT 50`,
        [query, internal],
      );
      // The 40 nearest passages name at most 40 records; each is one of the exact best, in order.
      expect(got.length).toBeGreaterThan(0);
      expect(got.map((r) => r.id)).toEqual(exact.slice(0, got.length).map((r) => r.id));
    }
  });

  it("come from the public collection's own index for a guest, never from the store's, whose graph holds internal passages", async () => {
    const before = [await indexScans(), await indexScans(PUBLIC_INDEX)];
    const got = await nearest(literal(unit(77_777)), [1], 10);
    expect(await indexScans()).toBe(before[0]);
    expect(await indexScans(PUBLIC_INDEX)).toBeGreaterThan(before[1]!);
    expect(got).toHaveLength(10);
  });

  it('come from the HNSW index for a caller who sees every collection, and are all visible', async () => {
    expect(PUBLIC_RECORDS * PUBLIC_PASSAGES + INTERNAL_RECORDS * INTERNAL_PASSAGES).toBeGreaterThan(3_000);
    const before = await indexScans();
    const got = await nearest(literal(unit(99_991)), [1, internal], 10);
    expect(await indexScans()).toBeGreaterThan(before);
    expect(got).toHaveLength(10);
    const collections = await sql.query<{ collection_id: number }>('SELECT DISTINCT collection_id FROM records WHERE id = ANY ($1::uuid[])', [
      `{${got.map((r) => r.id).join(',')}}`,
    ]);
    for (const c of collections) expect([1, internal]).toContain(Number(c.collection_id));
  });

  it('never include another collection\'s records on either path', async () => {
    const guest = await nearest(literal(unit(4242)), [1]);
    const onlyInternal = await nearest(literal(unit(4242)), [internal]);
    const collectionOf = async (ids: string[]) =>
      (await sql.query<{ c: number }>('SELECT DISTINCT collection_id AS c FROM records WHERE id = ANY ($1::uuid[])', [`{${ids.join(',')}}`])).map((r) => Number(r.c));
    expect(await collectionOf(guest.map((r) => r.id))).toEqual([1]);
    expect(await collectionOf(onlyInternal.map((r) => r.id))).toEqual([internal]);
  });
});
