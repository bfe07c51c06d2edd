/**
 * `npm run bench:keyword-scale -- [--dataset DIR] [--sizes 1000,5000,20000] [--rounds 3] [--queries 100] [--pool 50] [--out FILE] [--docs] [--quick]`
 *
 * How the keyword side's time grows with the store, three ways, in one process: 012's
 * statement (every record holding a query word scored; loaded under another name), the
 * store's own (015: the commonest words pruned by a MaxScore bound; what the AWS stack
 * runs), and the local server's (the question analysed by the store, then scored from
 * the copy of the BM25 tables in memory, `lambdas/retrieval/resident-keyword-index.ts`).
 * One in-memory store grows through `--sizes` records, imported and approved through the
 * service's own import; at each size every question goes to the three in turn, rotating
 * which goes first. Each round gives their p50s and ratios; the table shows the median of
 * `--rounds` rounds, the load average beside each, and whether every answer was 012's
 * (ids, order, matched words; scores and phrasing shares to the last bits).
 *
 * Documents: with `--dataset` (a BEIR folder such as SciFact) its documents, then,
 * past its size, documents made of sentences drawn (seeded) from its documents, so the
 * words keep their real frequencies; its queries are the questions. Without one, the
 * starter corpus's records in the same way and the real questions of the evaluation
 * fixtures. Questions are analysed as the service analyses them (weighted groups).
 *
 * Writes JSON (default `bench-results/keyword-scale.json`); `--docs` writes
 * docs/bench/keyword-scale.json and the section of docs/testing.md rendered from it.
 * `--quick` (the benchmark test): the starter corpus at 60 and 200 records, one round
 * of 5 questions.
 */
import { Command } from 'commander';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { analyseQuery } from '../../lambdas/retrieval/query-analysis.ts';
import { DEFAULT_SYNONYMS } from '../../lambdas/records/query-synonyms.ts';
import { BM25_K1, BM25_B } from '../../lambdas/retrieval/candidate-search.ts';
import { loadBeirDataset, type BeirDoc } from '../eval/beir.ts';
import { beirDocToRecord } from '../eval/run-eval.ts';
import { loadQuestions } from '../eval/guidance-eval.ts';
import { percentile } from '../eval/metrics.ts';
import { ResidentKeywordIndex } from '../../lambdas/retrieval/resident-keyword-index.ts';
import type { KeywordSnapshot, ResidentHit } from '../../lambdas/retrieval/keyword-snapshot.ts';
import { seededRandom } from './seeded-random.ts';
import { aggregateKeywordScale, type KeywordRound } from './keyword-scale-report.mjs';
import { recordInDocs } from './docs-report.mjs';

const opts = new Command('bench:keyword-scale')
  .option('--dataset <dir>', 'a BEIR folder whose documents and queries to use (default: the starter corpus and the real questions)')
  .option('--sizes <list>', 'store sizes in records, ascending', '1000,5000,20000')
  .option('--rounds <n>', 'timing rounds at each size (medians reported)', (v) => Number(v), 3)
  .option('--queries <n>', 'questions per round', (v) => Number(v), 100)
  .option('--pool <n>', 'records the keyword side returns (the service asks for 50)', (v) => Number(v), 50)
  .option('--out <file>', 'where the JSON report goes', 'bench-results/keyword-scale.json')
  .option('--docs', 'also write docs/bench/keyword-scale.json and the section of docs/testing.md')
  .option('--quick', 'the starter corpus at 60 and 200 records, one round of 5 questions: checks that the benchmark runs')
  .parse()
  .opts<{ dataset?: string; sizes: string; rounds: number; queries: number; pool: number; out: string; docs?: boolean; quick?: boolean }>();
if (opts.quick && opts.docs) {
  console.error('bench:keyword-scale: --docs records a full run; it cannot be combined with --quick');
  process.exit(2);
}
if (opts.quick) Object.assign(opts, { dataset: undefined, sizes: '60,200', rounds: 1, queries: 5 });
const sizes = opts.sizes.split(',').map(Number);
const counts = [opts.rounds, opts.queries, opts.pool];
if (!sizes.every((n, i) => Number.isInteger(n) && n >= 1 && (i === 0 || n > sizes[i - 1]!)) || !counts.every((n) => Number.isInteger(n) && n >= 1)) {
  console.error(`bench:keyword-scale: --sizes takes ascending positive whole numbers, --rounds, --queries and --pool positive whole numbers`);
  process.exit(2);
}

const progress = (what: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${what}\n`);

/** Documents and questions: the dataset's, or the starter corpus's records and the real questions. */
async function source(): Promise<{ name: string; docs: BeirDoc[]; questions: string[] }> {
  if (opts.dataset) {
    const data = await loadBeirDataset(resolve(opts.dataset));
    return { name: data.name, docs: data.corpus, questions: data.queries.map((q) => q.text) };
  }
  const records = await readRecordFiles(STARTER_CORPUS_DIR);
  const docs = records.map((r) => ({ id: r.slug, title: r.title, text: [r.summary, r.recommendation, r.rationale, ...r.pitfalls].filter(Boolean).join(' ') }));
  const fixtures = [...(await loadQuestions(resolve('test/fixtures/real-questions'))), ...(await loadQuestions(resolve('test/fixtures/guidance-eval')))];
  return { name: 'starter corpus', docs, questions: fixtures.map((q) => q.query) };
}

/** Document `i`: the source's own while it has one, then sentences drawn from its documents. */
function documentsFrom(docs: readonly BeirDoc[], random: () => number) {
  const sentences = docs.flatMap((d) => d.text.split(/(?<=[.!?])\s+/)).filter((s) => s.length > 0);
  return (i: number): BeirDoc => {
    if (i < docs.length) return docs[i]!;
    const like = docs[Math.floor(random() * docs.length)]!;
    const length = Math.max(2, like.text.split(/(?<=[.!?])\s+/).length);
    return { id: `drawn-${i}`, title: like.title, text: Array.from({ length }, () => sentences[Math.floor(random() * sentences.length)]).join(' ') };
  }
}

/** 012's keyword statement, under the name `chatctx_keyword_search_012`, so both run in one process. */
async function loadPreviousFunction(sql: PgliteSql): Promise<void> {
  const text = await readFile(resolve('schema/012_collections.sql'), 'utf8');
  const start = text.indexOf('CREATE OR REPLACE FUNCTION chatctx_keyword_search(');
  const end = text.indexOf('$fn$;', start);
  if (start < 0 || end < 0) throw new Error('the keyword function of schema/012_collections.sql was not found');
  await sql.query(text.slice(start, end + '$fn$;'.length).replace('FUNCTION chatctx_keyword_search(', 'FUNCTION chatctx_keyword_search_012('));
}

interface Call {
  readonly text: string;
  readonly groups: string;
}

/** One function's answer: its top rows as comparable text, its candidate count, its time. */
async function ask(sql: PgliteSql, fn: string, call: Call): Promise<{ ms: number; top: string; candidates: number; postings: number }> {
  const started = performance.now();
  const rows = await sql.query<{ id: string | null; score: number | null; detail: { candidates?: number; lexemes?: [string, number, number][] } }>(
    `SELECT * FROM ${fn}($1, $2::jsonb, NULL, '{1}', $3, $4, $5)`,
    [call.text, call.groups, opts.pool, BM25_K1, BM25_B],
    { json: ['detail'] },
  );
  const ms = performance.now() - started;
  const top = rows.filter((r) => r.id !== null).sort((a, b) => b.score! - a.score! || (a.id! < b.id! ? -1 : 1));
  const terms = rows.find((r) => r.id === null)?.detail;
  const postings = (terms?.lexemes ?? []).reduce((sum, [, , df]) => sum + Number(df), 0);
  return { ms, top: JSON.stringify(top), candidates: Number(terms?.candidates ?? 0), postings };
}

/**
 * The local server's way: the question analysed by the store (a new question's cost: a fresh
 * index's analysis cache is empty), then scored from the snapshot in memory.
 */
async function askResident(sql: PgliteSql, snapshot: KeywordSnapshot, call: Call): Promise<{ ms: number; top: ResidentHit[]; candidates: number }> {
  const started = performance.now();
  const query = await new ResidentKeywordIndex(sql).query(call.text, JSON.parse(call.groups) as { text: string; weight: number }[]);
  const found = snapshot.search(query, { collections: [1], limit: opts.pool, k1: BM25_K1, b: BM25_B });
  return { ms: performance.now() - started, top: [...found.hits], candidates: found.candidates };
}

/** The same records, order and matched words, and scores and phrasing shares within the last bits a logarithm can differ in. */
function sameAsStatement(statementTop: string, resident: readonly ResidentHit[]): boolean {
  const rows = JSON.parse(statementTop) as { id: string; score: number; detail: { matched: string[]; phrase: number } }[];
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
  return rows.length === resident.length && rows.every((r, i) => {
    const h = resident[i]!;
    return r.id === h.id && JSON.stringify(r.detail.matched) === JSON.stringify(h.matched) && close(r.score, h.score) && close(Number(r.detail.phrase), h.phrase);
  });
}

/** One round at one size: every question to the three ways, rotating which goes first. */
async function round(sql: PgliteSql, snapshot: KeywordSnapshot, calls: readonly Call[]): Promise<KeywordRound> {
  const ways = ['before', 'after', 'resident'] as const;
  const times = { before: [] as number[], after: [] as number[], resident: [] as number[] };
  let same = 0;
  let sameResident = 0;
  const totals = { before: 0, after: 0, resident: 0, postings: 0 };
  for (const [i, call] of calls.entries()) {
    const order = [...ways.slice(i % 3), ...ways.slice(0, i % 3)];
    const answers = {} as Record<'before' | 'after', Awaited<ReturnType<typeof ask>>>;
    let resident: Awaited<ReturnType<typeof askResident>> | undefined;
    for (const way of order) {
      if (way === 'resident') resident = await askResident(sql, snapshot, call);
      else answers[way] = await ask(sql, way === 'before' ? 'chatctx_keyword_search_012' : 'chatctx_keyword_search', call);
    }
    for (const way of ['before', 'after'] as const) {
      times[way].push(answers[way].ms);
      totals[way] += answers[way].candidates;
    }
    times.resident.push(resident!.ms);
    totals.resident += resident!.candidates;
    totals.postings += answers.after.postings;
    if (answers.before.top === answers.after.top) same++;
    if (sameAsStatement(answers.before.top, resident!.top)) sameResident++;
  }
  const p = (values: number[], q: number) => Number(percentile(values, q).toFixed(2));
  return {
    before_p50_ms: p(times.before, 50),
    before_p95_ms: p(times.before, 95),
    after_p50_ms: p(times.after, 50),
    after_p95_ms: p(times.after, 95),
    same_answers: same,
    resident_p50_ms: p(times.resident, 50),
    resident_p95_ms: p(times.resident, 95),
    resident_same_answers: sameResident,
    candidates_resident: Math.round(totals.resident / calls.length),
    questions: calls.length,
    postings_per_question: Math.round(totals.postings / calls.length),
    candidates_before: Math.round(totals.before / calls.length),
    candidates_after: Math.round(totals.after / calls.length),
    load_average_1m: Number(loadavg()[0]!.toFixed(2)),
  };
}

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const { name, docs, questions } = await source();
  const doc = documentsFrom(docs, seededRandom(20_261_207));
  const calls = questions.slice(0, opts.queries).map((q) => {
    const analysis = analyseQuery(q, DEFAULT_SYNONYMS);
    return { text: analysis.searchText, groups: JSON.stringify(analysis.groups.map((g) => ({ text: g.text, weight: g.weight }))) };
  });
  const sql = await PgliteSql.open();
  try {
    await migrate(sql);
    await loadPreviousFunction(sql);
    const rows = [];
    let records = 0;
    for (const size of sizes) {
      progress(`importing records ${records} to ${size}`);
      for (let from = records; from < size; from += 500) {
        const batch = Array.from({ length: Math.min(500, size - from) }, (_, k) => beirDocToRecord(doc(from + k), `doc-${from + k}`));
        await importRecords(sql, batch, { approve: true });
      }
      records = size;
      // What a local server does after a large import: fresh statistics for the planner.
      await sql.query('ANALYZE');
      // The local server's copy of this store (loaded as the server loads it after a change).
      const loadStarted = performance.now();
      const snapshot = await new ResidentKeywordIndex(sql).load();
      const residentLoadMs = Math.round(performance.now() - loadStarted);
      if (!snapshot) throw new Error('the keyword index did not load');
      for (const call of calls.slice(0, 5)) {
        for (const fn of ['chatctx_keyword_search_012', 'chatctx_keyword_search']) await ask(sql, fn, call);
        await askResident(sql, snapshot, call);
      }
      const rounds: KeywordRound[] = [];
      for (let r = 0; r < opts.rounds; r++) rounds.push(await round(sql, snapshot, calls));
      progress(`${size} records: ${JSON.stringify(rounds.map((x) => [x.before_p50_ms, x.after_p50_ms, x.resident_p50_ms]))}`);
      rows.push({ records: size, rounds, resident_load_ms: residentLoadMs });
    }
    const report = aggregateKeywordScale({ quick: opts.quick === true, date: started, node: process.version, cores: cpus().length, source: name, pool: opts.pool, sizes: rows });
    await mkdir(dirname(resolve(opts.out)), { recursive: true });
    await writeFile(resolve(opts.out), JSON.stringify(report, null, 2) + '\n');
    if (opts.docs) console.log(`recorded ${recordInDocs('keyword-scale', report).join(' and ')}`);
    console.log(JSON.stringify(report.summary, null, 2));
    console.log(`wrote ${opts.out}`);
  } finally {
    await sql.close();
  }
}

main().catch((error: unknown) => {
  console.error(`bench:keyword-scale failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
