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
