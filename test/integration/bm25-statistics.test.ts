/**
 * The BM25 side tables must always equal statistics recomputed from scratch over
 * the approved records (their weighted tsvector and their `asked_as` phrasings),
 * whatever happened to the records: added, changed, approved, deprecated; and the
 * phrasings the duplicates gate looks up must be exactly the approved records'.
 * Per collection too: each collection's N, length and document frequencies equal
 * those of its own approved records, after imports into a collection and moves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles, validateRecords } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { FIELD_WEIGHTS } from '../../lambdas/records/bm25-index.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import { moveRecord } from '../../lambdas/records/record-move.ts';

let store: MemoryStore;

const record = (slug: string, recommendation: string, extra: Record<string, unknown> = {}) =>
  validateRecords(
    [
      {
        slug,
        title: `Zanzibar ${slug}`,
        topic: 'data',
        recommendation,
        confidence: 'low',
        sources: [{ title: 'Docs', url: 'https://www.postgresql.org/docs/' }],
        ...extra,
      },
    ],
    () => slug,
  );

const WEIGHT = `CASE w WHEN 'A' THEN ${FIELD_WEIGHTS.A} WHEN 'B' THEN ${FIELD_WEIGHTS.B} WHEN 'C' THEN ${FIELD_WEIGHTS.C} ELSE ${FIELD_WEIGHTS.D} END`;

/** Statistics recomputed from the tsvectors of approved records: the weighted fields, plus asked_as at its own weight. */
async function fromScratch() {
  const weight = `CASE w WHEN 'A' THEN ${FIELD_WEIGHTS.A} WHEN 'B' THEN ${FIELD_WEIGHTS.B} WHEN 'C' THEN ${FIELD_WEIGHTS.C} ELSE ${FIELD_WEIGHTS.D} END`;
  const terms = await store.sql.query<{ lexeme: string; record_id: string; tf: number }>(
    `SELECT lexeme, record_id, sum(tf)::real AS tf FROM (
       SELECT u.lexeme, r.id::text AS record_id, (SELECT sum(${weight}) FROM unnest(u.weights) w) AS tf
         FROM records r, unnest(r.search_vector) u WHERE r.status = 'approved'
       UNION ALL
       SELECT u.lexeme, r.id::text, ${FIELD_WEIGHTS.asked} * array_length(u.positions, 1)
         FROM records r, unnest(r.asked_vector) u WHERE r.status = 'approved') f
      GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  const df = new Map<string, number>();
  for (const t of terms) df.set(t.lexeme, (df.get(t.lexeme) ?? 0) + 1);
  const [{ n }] = (await store.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM records WHERE status = 'approved'")) as [{ n: number }];
  const totalLen = terms.reduce((sum, t) => sum + Number(t.tf), 0);
  return { terms, df, n, totalLen };
}

async function maintained() {
  const terms = await store.sql.query<{ lexeme: string; record_id: string; tf: number }>(
    'SELECT lexeme, record_id::text AS record_id, tf FROM record_terms ORDER BY 1, 2',
  );
  const df = new Map(
    (
      await store.sql.query<{ lexeme: string; df: number }>('SELECT lexeme, sum(df)::int AS df FROM collection_term_stats GROUP BY lexeme HAVING sum(df) > 0')
    ).map((r) => [r.lexeme, r.df]),
  );
  const [stats] = (await store.sql.query<{ n: number; total_len: number }>(
    'SELECT coalesce(sum(n), 0)::int AS n, coalesce(sum(total_len), 0) AS total_len FROM collection_stats',
  )) as [{ n: number; total_len: number }];
  return { terms, df, n: stats.n, totalLen: Number(stats.total_len) };
}

/**
 * Per collection, recomputed from the approved records' own collection: N, total
 * length and each lexeme's document frequency; each key is `collection lexeme`.
 */
async function perCollectionFromScratch() {
  const terms = await store.sql.query<{ lexeme: string; collection_id: number; record_id: string; tf: number }>(
    `SELECT lexeme, collection_id, record_id, sum(tf)::real AS tf FROM (
       SELECT u.lexeme, r.collection_id, r.id::text AS record_id, (SELECT sum(${WEIGHT}) FROM unnest(u.weights) w) AS tf
         FROM records r, unnest(r.search_vector) u WHERE r.status = 'approved'
       UNION ALL
       SELECT u.lexeme, r.collection_id, r.id::text, ${FIELD_WEIGHTS.asked} * array_length(u.positions, 1)
         FROM records r, unnest(r.asked_vector) u WHERE r.status = 'approved') f
      GROUP BY 1, 2, 3`,
  );
  const df = new Map<string, number>();
  const totals = new Map<number, number>();
  for (const t of terms) {
    df.set(`${t.collection_id} ${t.lexeme}`, (df.get(`${t.collection_id} ${t.lexeme}`) ?? 0) + 1);
    totals.set(Number(t.collection_id), (totals.get(Number(t.collection_id)) ?? 0) + Number(t.tf));
  }
  const counts = await store.sql.query<{ collection_id: number; n: number }>(
    "SELECT collection_id, count(*)::int AS n FROM records WHERE status = 'approved' GROUP BY 1 ORDER BY 1",
  );
  const stats = counts.map((c) => ({ collection_id: Number(c.collection_id), n: c.n, total_len: totals.get(Number(c.collection_id)) ?? 0 }));
  return { df, stats };
}

async function perCollectionMaintained() {
  const rows = await store.sql.query<{ lexeme: string; collection_id: number; df: number }>('SELECT lexeme, collection_id, df FROM collection_term_stats WHERE df > 0');
  const df = new Map(rows.map((r) => [`${r.collection_id} ${r.lexeme}`, r.df]));
  const stats = (
    await store.sql.query<{ collection_id: number; n: number; total_len: number }>('SELECT collection_id, n, total_len FROM collection_stats WHERE n > 0 ORDER BY 1')
  ).map((r) => ({ collection_id: Number(r.collection_id), n: r.n, total_len: Number(r.total_len) }));
  // Every index row names its record's collection (search filters on it).
  const [stray] = await store.sql.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM record_terms t JOIN records r ON r.id = t.record_id WHERE t.collection_id <> r.collection_id)
          + (SELECT count(*) FROM record_passages p JOIN records r ON r.id = p.record_id WHERE p.collection_id <> r.collection_id) AS n`,
  );
  return { df, stats, stray: Number(stray!.n) };
}

async function expectConsistent() {
  const [perExpected, perActual] = [await perCollectionFromScratch(), await perCollectionMaintained()];
  expect(perActual.stray).toBe(0);
  expect(perActual.df).toEqual(perExpected.df);
  expect(perActual.stats.map((s) => [s.collection_id, s.n])).toEqual(perExpected.stats.map((s) => [s.collection_id, s.n]));
  perActual.stats.forEach((s, i) => expect(s.total_len).toBeCloseTo(perExpected.stats[i]!.total_len, 3));
  const [expected, actual] = [await fromScratch(), await maintained()];
  expect(actual.n).toBe(expected.n);
  expect(actual.totalLen).toBeCloseTo(expected.totalLen, 3);
  expect(actual.df).toEqual(expected.df);
  expect(actual.terms.map((t) => [t.lexeme, t.record_id, Number(t.tf)])).toEqual(expected.terms.map((t) => [t.lexeme, t.record_id, Number(t.tf)]));
  expect(await phrasings()).toEqual(await phrasingsFromScratch());
  expect(await phraseTerms()).toEqual(await phraseTermsFromScratch());
  const [masses, massesFromScratch] = [await phraseMasses(), await phraseMassesFromScratch()];
  expect(masses.map((m) => m.k)).toEqual(massesFromScratch.map((m) => m.k));
  masses.forEach((m, i) => expect(m.mass).toBeCloseTo(massesFromScratch[i]!.mass, 9));
}

/** Each phrasing's IDF mass, kept and recomputed from the phrasings' words and the current statistics. */
const phraseMasses = async () =>
  store.sql.query<{ k: string; mass: number }>("SELECT record_id || ' ' || phrase AS k, mass FROM record_phrase_mass ORDER BY 1");
const phraseMassesFromScratch = async () =>
  store.sql.query<{ k: string; mass: number }>(
    `SELECT r.id || ' ' || x.ord AS k, sum(ln(1 + (c.n - coalesce(ts.df, 0) + 0.5) / (coalesce(ts.df, 0) + 0.5))) AS mass
       FROM records r
            CROSS JOIN LATERAL (SELECT r.title AS t, 0::bigint AS ord UNION ALL SELECT e.value, e.ord FROM jsonb_array_elements_text(r.asked_as) WITH ORDINALITY e(value, ord)) x
            CROSS JOIN LATERAL (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', x.t)) u) w
            JOIN collection_stats c ON c.collection_id = r.collection_id
            LEFT JOIN collection_term_stats ts ON ts.lexeme = w.lexeme AND ts.collection_id = r.collection_id
      WHERE r.status = 'approved'
      GROUP BY r.id, x.ord ORDER BY 1`,
  );

/** Each approved record's phrasings as lexemes (what search measures a question against), kept and recomputed. */
const phraseTerms = async () =>
  (await store.sql.query<{ p: string }>("SELECT record_id || ' ' || phrase || ' ' || lexeme AS p FROM record_phrase_terms ORDER BY 1")).map((r) => r.p);
const phraseTermsFromScratch = async () =>
  (
    await store.sql.query<{ p: string }>(
      `SELECT DISTINCT r.id || ' ' || x.ord || ' ' || u.lexeme AS p
         FROM records r,
              LATERAL (SELECT r.title AS t, 0::bigint AS ord UNION ALL SELECT e.value, e.ord FROM jsonb_array_elements_text(r.asked_as) WITH ORDINALITY e(value, ord)) x,
              LATERAL unnest(to_tsvector('english', x.t)) u
        WHERE r.status = 'approved' ORDER BY 1`,
    )
  ).map((r) => r.p);

/** The phrasing keys kept for the duplicates gate, and the same computed from the approved records. */
const phrasings = async () =>
  (await store.sql.query<{ p: string }>("SELECT phrase || ' ' || record_id AS p FROM record_phrasings ORDER BY 1")).map((r) => r.p);
const phrasingsFromScratch = async () =>
  (
    await store.sql.query<{ p: string }>(
      `SELECT DISTINCT chatctx_phrase_key(x.t) || ' ' || r.id AS p
         FROM records r, LATERAL (SELECT r.title AS t UNION ALL SELECT jsonb_array_elements_text(r.asked_as)) x
        WHERE r.status = 'approved' ORDER BY 1`,
    )
  ).map((r) => r.p);

const df = async (lexeme: string) =>
  (await store.sql.query<{ df: number }>('SELECT sum(df)::int AS df FROM collection_term_stats WHERE lexeme = $1', [lexeme]))[0]?.df ?? 0;

let starterCount = 0;

beforeAll(async () => {
  store = await memoryStore();
  starterCount = (await readRecordFiles(STARTER_CORPUS_DIR)).length;
});

afterAll(async () => {
  await store.sql.close();
});

describe('BM25 statistics', () => {
  it('match a recomputation after the starter corpus import', async () => {
    await expectConsistent();
    expect((await maintained()).n).toBe(starterCount);
  });

  it('count an added record only once it is approved', async () => {
    await importRecords(store.sql, await record('one', 'Quokkas prefer keyset pagination.'), { approve: false });
    expect(await df('quokka')).toBe(0);
    await expectConsistent();
    await importRecords(store.sql, await record('one', 'Quokkas prefer keyset pagination.'), { approve: true });
    expect(await df('quokka')).toBe(1);
    await importRecords(store.sql, await record('two', 'Quokkas also like cursors.'), { approve: true });
    expect(await df('quokka')).toBe(2);
    await expectConsistent();
  });

  it('follow a changed record', async () => {
    await importRecords(store.sql, await record('two', 'Wombats like cursors instead.'), { approve: true });
    expect(await df('quokka')).toBe(1);
    expect(await df('wombat')).toBe(1);
    await expectConsistent();
  });

  it('follow a change to asked_as alone, which counts at its own weight', async () => {
    await importRecords(store.sql, await record('two', 'Wombats like cursors instead.', { asked_as: ['numbat pagination stalls', 'bilby cursor drift', 'quoll offset'] }), {
      approve: true,
    });
    expect(await df('numbat')).toBe(1);
    const [row] = await store.sql.query<{ tf: number }>("SELECT tf FROM record_terms t JOIN records r ON r.id = t.record_id WHERE r.slug = 'two' AND t.lexeme = 'numbat'");
    expect(Number(row!.tf)).toBe(FIELD_WEIGHTS.asked);
    await expectConsistent();
  });

  it('drop a deprecated record', async () => {
    await importRecords(store.sql, await record('one', 'Quokkas prefer keyset pagination.', { status: 'deprecated' }), { approve: true });
    expect(await df('quokka')).toBe(0);
    expect((await maintained()).n).toBe(starterCount + 1);
    await expectConsistent();
    const hits = (await store.tools.search_knowledge({ query: 'quokkas keyset' })).structuredContent as any;
    expect(hits.results.map((r: any) => r.slug)).not.toContain('one');
  });

  it('keep each collection\'s statistics apart, through an import into a collection and moves between collections', async () => {
    await createCollection(store.sql, 'support', null);
    await createCollection(store.sql, 'staff', null);
    await importRecords(store.sql, await record('three', 'Echidnas shard their queues.'), { approve: true, collection: 'support' });
    await importRecords(store.sql, await record('four', 'Echidnas and numbats batch their writes.'), { approve: true, collection: 'support' });
    await expectConsistent();
    await moveRecord(store.sql, { record: 'three', to: 'staff', reviewer: 'owner', reason: 'staff-only runbook from now on' });
    await expectConsistent();
    await moveRecord(store.sql, { record: 'two', to: 'support', reviewer: 'owner', reason: 'belongs with the support runbooks' });
    await expectConsistent();
    const [{ df: inSupport }] = (await store.sql.query<{ df: number }>(
      "SELECT df FROM collection_term_stats t JOIN collections c ON c.id = t.collection_id WHERE c.name = 'support' AND t.lexeme = 'numbat'",
    )) as [{ df: number }];
    expect(inSupport).toBe(2); // 'two' (its asked_as) and 'four'
    await moveRecord(store.sql, { record: 'two', to: 'public', reviewer: 'owner', reason: 'cleared for everyone again' });
    await expectConsistent();
    expect((await maintained()).n).toBe(starterCount + 3);
  });
});
