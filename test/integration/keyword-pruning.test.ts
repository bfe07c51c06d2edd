/**
 * Migration 015's keyword search skips the postings of a question's commonest words
 * once a bar is known (a MaxScore bound). It must answer exactly what scoring every
 * record answers: the same top records in the same order, the same scores to the
 * last bit, the same matched words and phrasing shares, the same statistics. Only
 * `candidates` may fall, to the records holding a word that was read.
 *
 * The starter corpus with real questions (issue threads and the evaluation's), their
 * weighted groups as the service builds them, with and without a technology filter,
 * at several pool sizes; pruning forced on (`chatctx.keyword_prune_postings` 0) and
 * off (a bound no question reaches), asked in the same session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { analyseQuery } from '../../lambdas/retrieval/query-analysis.ts';
import { DEFAULT_SYNONYMS } from '../../lambdas/records/query-synonyms.ts';
import { loadQuestions } from '../../bin/eval/guidance-eval.ts';

let sql: PgliteSql;
let questions: string[];

beforeAll(async () => {
  sql = await PgliteSql.open();
  await migrate(sql);
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  await sql.query('ANALYZE');
  const sets = [...(await loadQuestions('test/fixtures/real-questions')), ...(await loadQuestions('test/fixtures/guidance-eval'))];
  // Every fourth question: enough kinds of question, a few seconds of statements.
  questions = sets.filter((_, i) => i % 4 === 0).map((q) => q.query);
}, 120_000);

afterAll(async () => {
  await sql?.close();
});

interface Row {
  id: string | null;
  score: number | null;
  detail: { matched?: string[]; phrase?: number; candidates?: number; lexemes?: unknown; groups?: unknown; n?: number };
}

async function keywordSearch(question: string, technologies: string | null, limit: number, pruneAbove: string): Promise<{ top: Row[]; terms: Row }> {
  const analysis = analyseQuery(question, DEFAULT_SYNONYMS);
  const groups = JSON.stringify(analysis.groups.map((g) => ({ text: g.text, weight: g.weight })));
  return sql.transaction(async (tx) => {
    await tx.query(`SELECT set_config('chatctx.keyword_prune_postings', $1, true)`, [pruneAbove]);
    const rows = await tx.query<Row>(`SELECT * FROM chatctx_keyword_search($1, $2::jsonb, $3::jsonb, '{1}', $4, 1.2, 0.75)`, [analysis.searchText, groups, technologies, limit], {
      json: ['detail'],
    });
    const top = rows.filter((r) => r.id !== null).sort((a, b) => b.score! - a.score! || (a.id! < b.id! ? -1 : 1));
    return { top, terms: rows.find((r) => r.id === null)! };
  });
}

describe('keyword search with the commonest words pruned (migration 015)', () => {
  it('answers every question exactly as scoring every record does, and counts no more candidates', async () => {
    let pruned = 0;
    let calls = 0;
    for (const question of questions) {
      for (const technologies of [null, '["Node.js"]']) {
        for (const limit of [5, 10, 50]) {
          const all = await keywordSearch(question, technologies, limit, '1000000000');
          const some = await keywordSearch(question, technologies, limit, '0');
          calls++;
          // Exact: ids, order, scores to the last bit, matched words, phrasing shares.
          expect(some.top, `${question.slice(0, 60)} (${technologies}, ${limit})`).toEqual(all.top);
          const { candidates: counted, ...statistics } = some.terms.detail;
          const { candidates: everyRecord, ...sameStatistics } = all.terms.detail;
          expect(statistics).toEqual(sameStatistics);
          expect(counted).toBeLessThanOrEqual(everyRecord!);
          expect(counted).toBeGreaterThanOrEqual(all.top.length);
          if (counted! < everyRecord!) pruned++;
        }
      }
    }
    // The comparison means something only if the bound skipped records often.
    expect(pruned).toBeGreaterThan(calls / 3);
  }, 300_000);

  it('scores and counts every record holding a word of the question below the setting, as before', async () => {
    const question = 'retry failed fetch calls with exponential backoff and jitter';
    const byDefault = await sql.query<Row>(`SELECT * FROM chatctx_keyword_search($1, '[]'::jsonb, NULL, '{1}', 5, 1.2, 0.75)`, [question], { json: ['detail'] });
    const counted = byDefault.find((r) => r.id === null)!.detail.candidates;
    const [every] = await sql.query<{ n: number }>(
      `SELECT count(DISTINCT record_id)::int AS n FROM record_terms WHERE lexeme IN (SELECT u.lexeme FROM unnest(to_tsvector('english', $1)) u) AND collection_id = 1`,
      [question],
    );
    expect(counted).toBe(every!.n);
  });

  it('ignores a setting that is not a whole number: the default holds, and it does not prune a small store', async () => {
    const question = 'retry failed fetch calls with exponential backoff and jitter';
    const odd = await keywordSearch(question, null, 5, 'lots');
    const unset = await keywordSearch(question, null, 5, '');
    const forced = await keywordSearch(question, null, 5, '0');
    expect(odd).toEqual(unset);
    // Forced pruning counts fewer candidates here, so an odd value read as 0 would show.
    expect(forced.terms.detail.candidates).toBeLessThan(odd.terms.detail.candidates!);
  });
});
