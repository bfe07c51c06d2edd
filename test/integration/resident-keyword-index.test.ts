/**
 * The keyword side scored from the local server's copy in memory must answer what the
 * store's statement answers: the same records in the same order, the same matched
 * words, scores and phrasing shares (to the last bits a logarithm can differ in), the
 * same statistics and the same count of candidates, for every caller's collections and
 * technology filter; and it must never answer from a copy of an older corpus.
 *
 * A store of the starter corpus in the public collection and part of it again, under
 * other slugs, in an internal collection, so that the statistics a guest and an
 * internal caller see differ. Real questions (issue threads and the evaluation's),
 * analysed as the service analyses them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { migratedStore, memoryStore, seededUseLite } from '../support/store.ts';
import { readRecordFiles, validateRecords } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { analyseQuery } from '../../lambdas/retrieval/query-analysis.ts';
import { DEFAULT_SYNONYMS } from '../../lambdas/records/query-synonyms.ts';
import { BM25_B, BM25_K1 } from '../../lambdas/retrieval/candidate-search.ts';
import { ResidentKeywordIndex, loadSnapshot } from '../../lambdas/retrieval/resident-keyword-index.ts';
import { KeywordSnapshot } from '../../lambdas/retrieval/keyword-snapshot.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { PassageSnapshot, RESIDENT_PASSAGES } from '../../lambdas/retrieval/passage-snapshot.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { vectorLiteral } from '../../lambdas/embeddings/vector-codec.ts';
import { loadQuestions } from '../../bin/eval/guidance-eval.ts';

let sql: PgliteSql;
let internal = 0;
let questions: string[];

beforeAll(async () => {
  sql = await migratedStore(true);
  internal = (await createCollection(sql, 'internal', null)).id;
  const starter = await readRecordFiles(STARTER_CORPUS_DIR);
  const copies = starter.filter((_, i) => i % 3 === 0).map((r) => ({ ...r, slug: `internal-${r.slug}` }));
  await importRecords(sql, copies, { approve: true, collection: 'internal' });
  const sets = [...(await loadQuestions('test/fixtures/real-questions')), ...(await loadQuestions('test/fixtures/guidance-eval'))];
  questions = sets.filter((_, i) => i % 3 === 0).map((q) => q.query);
}, 300_000);

afterAll(async () => {
  await sql?.close();
});

interface Row {
  id: string | null;
  score: number | null;
  detail: { matched?: string[]; phrase?: number; candidates?: number; lexemes?: [string, number, number][]; groups?: string[][]; n?: number };
}

/** The store's statement with every record scored (no pruning), as the reference. */
async function statement(question: string, technologies: string[] | undefined, collections: number[], limit: number) {
  const analysis = analyseQuery(question, DEFAULT_SYNONYMS);
  const groups = JSON.stringify(analysis.groups.map((g) => ({ text: g.text, weight: g.weight })));
  return sql.transaction(async (tx) => {
    await tx.query(`SELECT set_config('chatctx.keyword_prune_postings', '1000000000', true)`);
    const rows = await tx.query<Row>(
      `SELECT * FROM chatctx_keyword_search($1, $2::jsonb, $3::jsonb, ARRAY(SELECT jsonb_array_elements_text($4::jsonb)::int), $5, $6, $7)`,
      [analysis.searchText, groups, technologies ? JSON.stringify(technologies) : null, JSON.stringify(collections), limit, BM25_K1, BM25_B],
      { json: ['detail'] },
    );
    const top = rows.filter((r) => r.id !== null).sort((a, b) => b.score! - a.score! || (a.id! < b.id! ? -1 : 1));
    return { top, terms: rows.find((r) => r.id === null)!.detail };
  });
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));

describe('the keyword side from memory', () => {
  it('answers every question as the store\'s statement does, for each caller\'s collections and technology filter', async () => {
    const index = new ResidentKeywordIndex(sql);
    const snapshot = (await index.load())!;
    expect(snapshot).toBeInstanceOf(KeywordSnapshot);
    let compared = 0;
    let scored = 0;
    for (const question of questions) {
      const analysis = analyseQuery(question, DEFAULT_SYNONYMS);
      const query = await index.query(analysis.searchText, analysis.groups);
      for (const collections of [[1], [1, internal], [internal]]) {
        for (const technologies of [undefined, ['Node.js'], ['postgresql', 'React']]) {
          for (const limit of [10, 50]) {
            const want = await statement(question, technologies, collections, limit);
            const got = snapshot.search(query, { collections, technologies, limit, k1: BM25_K1, b: BM25_B });
            const where = `${question.slice(0, 50)} (${collections}, ${technologies}, ${limit})`;
            expect(got.hits.map((h) => h.id), where).toEqual(want.top.map((r) => r.id));
            expect(got.hits.map((h) => h.matched), where).toEqual(want.top.map((r) => r.detail.matched));
            got.hits.forEach((h, i) => {
              expect(close(h.score, want.top[i]!.score!), `${where}: score ${h.score} against ${want.top[i]!.score}`).toBe(true);
              expect(close(h.phrase, Number(want.top[i]!.detail.phrase)), `${where}: phrase ${h.phrase} against ${want.top[i]!.detail.phrase}`).toBe(true);
            });
            expect(got.candidates, where).toBe(Number(want.terms.candidates));
            expect(got.n, where).toBe(Number(want.terms.n));
            expect(got.groups, where).toEqual(want.terms.groups);
            expect(got.lexemes.map(([l, , df]) => [l, df]), where).toEqual(want.terms.lexemes!.map(([l, , df]) => [l, Number(df)]));
            got.lexemes.forEach(([, idf], i) => expect(close(idf, Number(want.terms.lexemes![i]![1])), where).toBe(true));
            compared++;
            scored += got.hits.length;
          }
        }
      }
    }
    // The comparison means something only if most questions found records under most filters.
    expect(compared).toBe(questions.length * 18);
    expect(scored).toBeGreaterThan(compared * 5);
  }, 300_000);

  it('is never used for a newer corpus: a change is searched by the statement until the copy of it has loaded', async () => {
    const index = new ResidentKeywordIndex(sql);
    const before = (await index.load())!;
    const generationNow = async () => Number((await sql.query<{ generation: number }>('SELECT generation FROM corpus_stats WHERE id = 1'))[0]!.generation);
    expect(index.forGeneration(await generationNow())).toBe(before);
    await importRecords(sql, await newRecord('zebrafish-otolith-calibration'), { approve: true });
    const now = await generationNow();
    expect(index.forGeneration(now)).toBeUndefined();
    const after = (await index.load())!;
    expect(after.generation).toBe(now);
    const query = await index.query('zebrafish otolith calibration', []);
    const options = { collections: [1], limit: 5, k1: BM25_K1, b: BM25_B };
    expect(before.search(query, options).hits).toEqual([]);
    expect(after.search(query, options).hits.map((h) => h.matched)).toEqual([['calibr', 'otolith', 'zebrafish']]);
  }, 120_000);

  it('starts a background load at most once a second, however many searches find no copy of their generation', async () => {
    const { index, generationReads } = countingLoads();
    // A generation no copy will ever have, as during an import whose every chunk is a new one.
    const started = Date.now();
    while (Date.now() - started < 2500) {
      expect(index.forGeneration(-1)).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const seconds = (Date.now() - started) / 1000;
    // Each load reads the generation as it starts and as it ends. Without the gap this store's
    // copy (about 0.1 s to read) was read again after every one of these searches. A load
    // under way on a slow machine has read it once.
    expect(generationReads()).toBeGreaterThanOrEqual(1);
    expect(generationReads()).toBeLessThanOrEqual(2 * (Math.ceil(seconds) + 1));
  }, 60_000);

  it('waits for the corpus to stop changing before it loads a copy for searches', async () => {
    const { index, generationReads } = countingLoads();
    // Searches asking for a new generation every 100 ms, as during an import: no load starts.
    for (let generation = 1_000_000; generation < 1_000_020; generation++) {
      expect(index.forGeneration(generation)).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(generationReads()).toBe(0);
    // Once the generation stays put, one load follows.
    const waited = Date.now();
    while (generationReads() === 0 && Date.now() - waited < 30_000) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(generationReads()).toBeGreaterThan(0);
  }, 60_000);

  it('throws a copy away when the corpus changed while it was being read', async () => {
    let writes = 0;
    // The store, with an import committed between the load's second and third statements.
    const racing: Sql = {
      query: async (text, params, options) => {
        if (++writes === 3) await importRecords(sql, await newRecord(`halfway-record-${Date.now()}`), { approve: true });
        return sql.query(text, params, options);
      },
      transaction: (work) => sql.transaction(work),
    };
    expect(await loadSnapshot(racing)).toBeUndefined();
    expect(await loadSnapshot(sql)).toBeDefined();
  }, 120_000);
});

/** An index over the store that counts the generation reads its loads make (two a load). */
function countingLoads() {
  let reads = 0;
  const counting: Sql = {
    query: async (text, params, options) => {
      if (text.startsWith('SELECT generation')) reads++;
      return sql.query(text, params, options);
    },
    transaction: (work) => sql.transaction(work),
  };
  return { index: new ResidentKeywordIndex(counting), generationReads: () => reads };
}

async function newRecord(slug: string) {
  const words = slug.split('-').join(' ');
  return validateRecords(
    [{ slug, title: `Check ${words}`, topic: 'data', recommendation: `Repeat the ${words} before each run.`, confidence: 'low', sources: [{ title: 'Docs', url: 'https://www.postgresql.org/docs/' }] }],
    () => slug,
  );
}

describe('search_knowledge with the keyword side from memory', () => {
  it('gives the same answers as with the store\'s statement', async () => {
    const store = await memoryStore({ embedder: await seededUseLite() });
    // The store's exact scan, which the passage vectors in memory reproduce (the HNSW walk approximates it).
    await store.sql.query(`SET chatctx.exact_passages = '1000000'`);
    try {
      const deps = { sql: store.sql, secrets: { pepper: async () => store.pepper }, embedder: await seededUseLite(), logger: store.logger };
      const index = new ResidentKeywordIndex(store.sql);
      await index.load();
      const resident = createToolHandlers({ ...deps, keywordIndex: index });
      const statementOnly = createToolHandlers(deps);
      let answered = 0;
      for (const query of questions.slice(0, 24)) {
        const a = (await resident.search_knowledge({ query })).structuredContent as { results: unknown[]; total_candidates?: number };
        const b = (await statementOnly.search_knowledge({ query })).structuredContent as { results: unknown[]; total_candidates?: number };
        expect(a.results, query.slice(0, 60)).toEqual(b.results);
        expect(a.total_candidates).toBe(b.total_candidates);
        if (a.results.length > 0) answered++;
      }
      expect(answered).toBeGreaterThan(12);
    } finally {
      await store.sql.close();
    }
  }, 300_000);
});

describe('the dense side from memory (passage vectors)', () => {
  it('finds the nearest records and the keyword hits\' similarities exactly as the store\'s exact scan does', async () => {
    const embedder = await seededUseLite();
    const store = await memoryStore({ embedder });
    try {
      const db = store.sql;
      const inside = (await createCollection(db, 'internal', null)).id;
      const starter = await readRecordFiles(STARTER_CORPUS_DIR);
      await importRecords(db, starter.filter((_, i) => i % 4 === 0).map((r) => ({ ...r, slug: `internal-${r.slug}` })), { approve: true, collection: 'internal' });
      await embedRecords(db, embedder, await recordsToEmbed(db, embedder.model));
      // A record withdrawn after it was embedded: its passages stay, and neither side may return it as nearest.
      const [withdrawn] = await db.query<{ id: string }>(`UPDATE records SET status = 'deprecated' WHERE slug = 'use-stable-keys-for-dynamic-react-lists' RETURNING id::text AS id`);
      const index = new ResidentKeywordIndex(db);
      const snapshot = (await index.load())!;
      const passages = snapshot.passages!;
      expect(passages).toBeInstanceOf(PassageSnapshot);
      const [{ n }] = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM record_passages')) as [{ n: number }];
      expect(passages.passages).toBe(n);
      expect(n).toBeLessThanOrEqual(RESIDENT_PASSAGES);
      const vectors = await embedder.embed(questions.slice(0, 40));
      let compared = 0;
      let found = 0;
      for (const [q, question] of questions.slice(0, 40).entries()) {
        const literal = vectorLiteral(vectors[q]!);
        const values = (await index.queryVector({ literal }))!;
        const analysis = analyseQuery(question, DEFAULT_SYNONYMS);
        const words = await index.query(analysis.searchText, analysis.groups);
        for (const collections of [[1], [1, inside], [inside]]) {
          const keywordIds = snapshot.search(words, { collections, limit: 50, k1: BM25_K1, b: BM25_B }).hits.map((h) => h.id);
          for (const technologies of [undefined, ['React'], ['postgresql', 'Node.js']]) {
            for (const [pool, nearest] of [[50, 40], [10, 100]] as const) {
              const want = await db.transaction(async (tx) => {
                await tx.query(`SELECT set_config('chatctx.exact_passages', '1000000', true)`);
                return tx.query<{ kind: string; id: string; score: number }>(
                  `SELECT * FROM chatctx_dense_candidates($1::vector, NULL, $2::jsonb, ARRAY(SELECT jsonb_array_elements_text($3::jsonb)::int), $4, $5, $6::jsonb)`,
                  [literal, technologies ? JSON.stringify(technologies) : null, JSON.stringify(collections), pool, nearest, JSON.stringify(keywordIds)],
                );
              });
              const got = passages.search(values, { collections, technologies, passages: nearest, pool, keywordIds });
              const where = `${question.slice(0, 50)} (${collections}, ${technologies}, ${pool}/${nearest})`;
              const wantDense = want.filter((r) => r.kind === 'dense').sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
              // To the last bit: the same single-precision sums in the same order.
              expect(got.dense.map((d) => [d.id, d.similarity]), where).toEqual(wantDense.map((r) => [r.id, Number(r.score)]));
              const wantSims = new Map(want.filter((r) => r.kind === 'similarity').map((r) => [r.id, Number(r.score)]));
              expect(new Map([...got.similarities].sort()), where).toEqual(new Map([...wantSims].sort()));
              found += got.dense.length;
              compared++;
            }
          }
        }
      }
      expect(compared).toBe(40 * 18);
      expect(found).toBeGreaterThan(compared * 5);
      // The withdrawn record's own question: its passages are the nearest, and neither side returns it.
      const [own] = await embedder.embed(['stable keys for dynamic React lists']);
      const literal = vectorLiteral(own!);
      const nearest = await db.query<{ id: string }>('SELECT record_id::text AS id FROM record_passages ORDER BY embedding <=> $1::vector LIMIT 1', [literal]);
      expect(nearest[0]!.id).toBe(withdrawn!.id);
      const got = passages.search((await index.queryVector({ literal }))!, { collections: [1], passages: 40, pool: 50, keywordIds: [] });
      expect(got.dense.length).toBeGreaterThan(0);
      expect(got.dense.map((d) => d.id)).not.toContain(withdrawn!.id);

      // A new question's vector is stored under its key, as the statement stores it: another
      // server (a fresh index) reads it back exactly; a key nobody stored is missing.
      const stored = (await index.queryVector({ literal, cacheKey: 'test-key-stable-react-keys' }))!;
      expect(await new ResidentKeywordIndex(db).queryVector({ cacheKey: 'test-key-stable-react-keys' })).toEqual(stored);
      expect(await new ResidentKeywordIndex(db).queryVector({ cacheKey: 'test-key-never-stored' })).toBeUndefined();
    } finally {
      await store.sql.close();
    }
  }, 600_000);
});
