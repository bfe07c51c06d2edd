/**
 * Stores of a chosen size for the dense side alone: approved records with no text to
 * speak of, each with three or four passages (3.33 on average, as the generated
 * records of `bench:hot-paths` have) whose vectors are made from the starter corpus's
 * shipped passage vectors, chosen by a seeded generator. So the passages crowd where
 * real guidance crowds, as an encoder's vectors do, and the same seed builds the
 * same store. Used by `bench:vector-plan` and by the plan
 * test of the nearest-passage statement; nothing here is an answer to check.
 */
import { loadSeed } from '../../lambdas/embeddings/embedding-seed.ts';
import { vectorLiteral } from '../../lambdas/embeddings/vector-codec.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { seededRandom } from './seeded-random.ts';

/** The bundled encoder's model and width: the shipped vectors the passages are made from. */
const MODEL = 'universal-sentence-encoder-lite';
const DIMENSIONS = 512;
/** How far a query moves from the shipped vector it starts from (per dimension, before normalising): a cosine of about 0.8. */
const QUERY_NOISE = 0.03;

export interface PassageSource {
  readonly bases: readonly Float32Array[];
  readonly random: () => number;
}

/** The shipped vectors and a seeded generator; fails when the seed file is missing (a broken checkout). */
export async function passageSource(seed: number): Promise<PassageSource> {
  const bases = [...(await loadSeed(MODEL, DIMENSIONS)).values()];
  if (bases.length === 0) throw new Error(`no shipped vectors for ${MODEL}: guidance/embeddings/ is missing its seed file`);
  return { bases, random: seededRandom(seed) };
}

/** A normal deviate (Box-Muller) from the seeded generator. */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(random() + Number.EPSILON)) * Math.cos(2 * Math.PI * random());
}

/** A query vector: a shipped vector moved by seeded noise, at unit length. */
export function queryVector(source: PassageSource): number[] {
  const base = source.bases[Math.floor(source.random() * source.bases.length)]!;
  const moved = Array.from(base, (x) => x + QUERY_NOISE * normal(source.random));
  let norm = 0;
  for (const x of moved) norm += x * x;
  norm = Math.sqrt(norm);
  return moved.map((x) => x / norm);
}

/** A whole-number array as PostgreSQL's array text, for an `int[]` parameter. */
const intArray = (values: readonly number[]) => `{${values.join(',')}}`;

/** The vector indexes as the schema defines them (001, and the public collection's own from 013). */
const VECTOR_INDEXES = [
  'CREATE INDEX IF NOT EXISTS record_passages_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops)',
  'CREATE INDEX IF NOT EXISTS record_passages_public_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops) WHERE collection_id = 1',
];

/** Puts the shipped vectors in a temporary table of the session, so passages are made in SQL (no vector text to parse). */
async function loadBases(sql: Sql, source: PassageSource): Promise<void> {
  await sql.query('CREATE TEMP TABLE IF NOT EXISTS passage_bases (i int PRIMARY KEY, v vector)');
  const [row] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM passage_bases');
  if (row?.n === source.bases.length) return;
  await sql.query('INSERT INTO passage_bases SELECT (x.i - 1)::int, x.v::vector FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY AS x(v, i)', [
    JSON.stringify(source.bases.map(vectorLiteral)),
  ]);
}

/**
 * Adds records `<prefix>-<from>` up to `<prefix>-<to - 1>`, approved, in `collection`,
 * with their passages; returns how many passages it wrote. Each passage is three parts
 * of one shipped vector and one part of another, at unit length (a cosine of about 0.9
 * with the first). Like a large import on a server (`embedRecords` with `deferIndex`),
 * the vector indexes are dropped first and built once at the end, which is about four
 * times faster than growing it row by row.
 */
export async function addPassageRecords(sql: Sql, source: PassageSource, options: { prefix: string; from: number; to: number; collection: number }): Promise<number> {
  await loadBases(sql, source);
  const records: number[] = [];
  const first: number[] = [];
  const second: number[] = [];
  for (let i = options.from; i < options.to; i++) {
    const count = 3 + (source.random() < 1 / 3 ? 1 : 0);
    for (let p = 0; p < count; p++) {
      records.push(i);
      first.push(Math.floor(source.random() * source.bases.length));
      second.push(Math.floor(source.random() * source.bases.length));
    }
  }
  await sql.transaction(async (tx) => {
    await tx.query('DROP INDEX IF EXISTS record_passages_embedding_idx, record_passages_public_embedding_idx');
    await tx.query(
      `INSERT INTO records (id, slug, status, title, topic, recommendation, confidence, content_hash, collection_id)
       SELECT gen_random_uuid(), $1 || '-' || i, 'approved', 'Generated record ' || i, 'reliability', 'Generated guidance.', 'low', md5($1 || i), $4
         FROM generate_series($2::int, $3::int) i`,
      [options.prefix, options.from, options.to - 1, options.collection],
    );
    await tx.query(
      `INSERT INTO record_passages (record_id, passage, embedding, collection_id)
       SELECT r.id, (row_number() OVER (PARTITION BY x.n))::int - 1, l2_normalize(a.v + a.v + a.v + b.v), $5
         FROM unnest($2::int[], $3::int[], $4::int[]) AS x(n, a, b)
         JOIN records r ON r.slug = $1 || '-' || x.n
         JOIN passage_bases a ON a.i = x.a
         JOIN passage_bases b ON b.i = x.b`,
      [options.prefix, intArray(records), intArray(first), intArray(second), options.collection],
    );
    for (const index of VECTOR_INDEXES) await tx.query(index);
  });
  return records.length;
}
