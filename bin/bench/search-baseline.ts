/**
 * `npx tsx bin/bench/search-baseline.ts --baseline DIR [--runs 3] [--questions 200] [--quality] [--json FILE] [--quick]`
 *
 * `search_knowledge` in process on the starter corpus, this checkout against an
 * earlier one, side by side in one process: each version opens its own in-memory
 * store with its own starter corpus and code (DIR is a checkout of another commit,
 * e.g. `git worktree add ../baseline <commit>`, whose node_modules resolve), and both
 * answer the same questions, alternating which goes first. Each run asks every
 * question twice: first with a query embedding no store has seen (the encoder runs),
 * then again (the embedding is in the store's cache). No answer cache: every search
 * ranks, judges and shapes. The encoder is one USE-lite instance both share.
 * `--server-cache` gives each version the local server's search cache (records,
 * synonyms and profiles kept per corpus generation) with answer reuse turned off:
 * what a new question costs on a running server.
 *
 * Prints p50 and p95 per version and pass, the ratio of this checkout's p50 to the
 * baseline's within each run (the figure that survives a noisy machine), the median
 * over runs, and the load average beside each run; writes the same as JSON.
 *
 * `--quality` first answers every question of both evaluation sets with both versions
 * (hybrid, max_results 10) and prints the honesty table per version, set and half
 * (bin/eval/guidance-eval.ts): what this checkout changed for agents, on the
 * same questions, in the same process.
 *
 * `--quick` (the benchmark test, with `--baseline .`: this checkout against itself)
 * asks 3 questions in one run over the first 8 starter records, whose passages take
 * their vectors from the shipped seed (the questions still run the encoder): it
 * checks that the benchmark runs, not the ratio.
 */
import { Command } from 'commander';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { loadSeed, SeededEmbedder } from '../../lambdas/embeddings/embedding-seed.ts';
import { CachedEmbedder } from '../eval/cached-embedder.ts';
import { answerAll, byHalf, formatHonesty, loadQuestionSet, loadQuestions, type HonestyMetrics } from '../eval/guidance-eval.ts';
import type { SearchKnowledgeOutput } from '../../schema/tools.ts';
import { percentile } from '../eval/metrics.ts';

const opts = new Command('bench-search-baseline')
  .requiredOption('--baseline <dir>', 'a checkout of the commit to compare with')
  .option('--runs <n>', 'runs (median reported)', (v) => Number(v), 3)
  .option('--questions <n>', 'questions per run, a fixed sample of both evaluation sets', (v) => Number(v), 200)
  .option('--quality', "also answer both evaluation sets with both versions and print their tables")
  .option('--server-cache', "give each version the local server's search cache (records and settings per corpus generation) with answer reuse off")
  .option('--json <file>', 'where to write the report', '.chatctx/bench/search-baseline.json')
  .option('--cache-dir <dir>', 'document embedding cache', '.chatctx/eval-cache')
  .option('--quick', 'one run of 3 questions over 8 starter records: checks that the benchmark runs')
  .parse()
  .opts<{ baseline: string; runs: number; questions: number; quality?: boolean; serverCache?: boolean; json: string; cacheDir: string; quick?: boolean }>();
if (opts.quick) Object.assign(opts, { runs: 1, questions: 3 });
/** Starter records per store when quick: embedding all of them with an empty cache takes minutes. */
const QUICK_RECORDS = 8;
if (![opts.runs, opts.questions].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error(`bench:search-baseline: --runs and --questions take positive whole numbers (got ${opts.runs}, ${opts.questions})`);
  process.exit(2);
}

type Search = (args: Record<string, unknown>) => Promise<SearchKnowledgeOutput>;

/** Opens a store with `root`'s own code, schema and starter corpus, and returns its search. */
async function version(root: string, embedder: Embedder): Promise<Search> {
  const load = (path: string) => import(resolve(root, path));
  const [{ PgliteSql }, { migrate }, { readRecordFiles }, { importRecords }, { embedRecords, recordsToEmbed }, { searchKnowledge }, { createLogger }, { searchKnowledgeInput }] =
    await Promise.all([
      load('lambdas/storage/pglite-sql.ts'),
      load('lambdas/storage/migrations.ts'),
      load('lambdas/records/record-files.ts'),
      load('lambdas/records/record-import.ts'),
      load('lambdas/embeddings/record-embeddings.ts'),
      load('lambdas/retrieval/search-service.ts'),
      load('lambdas/observability/logger.ts'),
      load('schema/tools.ts'),
    ]);
  const { SearchCache } = await load('lambdas/retrieval/search-cache.ts');
  // The server's cache, except that a question is never answered from an earlier answer.
  class NoAnswerReuse extends SearchCache {
    answer() {
      return undefined;
    }
  }
  const sql = await PgliteSql.open();
  await migrate(sql);
  await importRecords(sql, (await readRecordFiles(resolve(root, 'guidance'))).slice(0, opts.quick ? QUICK_RECORDS : undefined), { approve: true });
  await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model));
  await sql.query('ANALYZE');
  const pepper = randomBytes(32);
  const deps = { sql, secrets: { pepper: async () => pepper }, embedder, logger: createLogger(() => {}), cache: opts.serverCache ? new NoAnswerReuse() : undefined };
  stores.push(sql);
  return async (args) => searchKnowledge(deps, searchKnowledgeInput.parse(args));
}
/** Every store opened, closed at the end: an open PGlite keeps a 10 s timer that holds the process. */
const stores: { close(): Promise<void> }[] = [];

/** A fixed sample: every k-th question of both sets, in file order (no randomness to seed). */
async function sample(n: number): Promise<string[]> {
  const all = [...(await loadQuestions(resolve('test/fixtures/real-questions'))), ...(await loadQuestions(resolve('test/fixtures/guidance-eval')))];
  const step = Math.max(1, Math.floor(all.length / n));
  return all.filter((_, i) => i % step === 0).slice(0, n).map((q) => q.query);
}

const inner = new UseLiteEmbedder();
// Quick: the records' passages come from the shipped seed (the same vectors the encoder
// gives), so an empty cache does not embed them; questions still go to the encoder.
const embedder = await CachedEmbedder.open(opts.quick ? new SeededEmbedder(inner, await loadSeed(inner.model, inner.dimensions)) : inner, resolve(opts.cacheDir));
const versions = { current: await version(process.cwd(), embedder), baseline: await version(resolve(opts.baseline), embedder) };
const questions = await sample(opts.questions);
await Promise.all(Object.values(versions).map((search) => search({ query: 'warm up the statements and the tokenizer' })));

const quality: Record<string, Record<string, HonestyMetrics>> = {};
if (opts.quality) {
  const sets = [await loadQuestionSet('real', resolve('test/fixtures/real-questions'), 'record'), await loadQuestionSet('written', resolve('test/fixtures/guidance-eval'), 'id')];
  for (const set of sets) {
    for (const [name, search] of Object.entries(versions)) {
      quality[`${set.name}, ${name === 'current' ? 'this checkout' : 'baseline'}`] = byHalf(set, await answerAll(set.questions, (args) => search(args as Record<string, unknown>)));
    }
  }
  console.log(formatHonesty(quality));

}

interface RunResult {
  load: number[];
  ms: Record<'current' | 'baseline', Record<'miss' | 'hit', number[]>>;
}

const runs: RunResult[] = [];
for (let run = 0; run < opts.runs; run++) {
  const result: RunResult = { load: loadavg(), ms: { current: { miss: [], hit: [] }, baseline: { miss: [], hit: [] } } };
  for (const pass of ['miss', 'hit'] as const) {
    for (const [i, base] of questions.entries()) {
      // A new text per run, so the first pass is a real encoder call in both stores.
      const query = `${base} (run ${run + 1})`;
      const order = (i + run) % 2 === 0 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const);
      for (const name of order) {
        const started = performance.now();
        await versions[name]({ query });
        result.ms[name][pass].push(performance.now() - started);
      }
    }
  }
  runs.push(result);
  console.error(`run ${run + 1}/${opts.runs} done (load ${result.load.map((l) => l.toFixed(2)).join(' ')})`);
}

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
const summary = (['miss', 'hit'] as const).map((pass) => {
  const perRun = runs.map((r) => ({
    current: { p50: median(r.ms.current[pass]), p95: percentile([...r.ms.current[pass]].sort((a, b) => a - b), 95) },
    baseline: { p50: median(r.ms.baseline[pass]), p95: percentile([...r.ms.baseline[pass]].sort((a, b) => a - b), 95) },
    load: r.load[0]!,
  }));
  return {
    pass,
    current_p50: median(perRun.map((r) => r.current.p50)),
    current_p95: median(perRun.map((r) => r.current.p95)),
    baseline_p50: median(perRun.map((r) => r.baseline.p50)),
    baseline_p95: median(perRun.map((r) => r.baseline.p95)),
    ratio_p50: median(perRun.map((r) => r.current.p50 / r.baseline.p50)),
    ratios: perRun.map((r) => Math.round((r.current.p50 / r.baseline.p50) * 100) / 100),
    loads: perRun.map((r) => Math.round(r.load * 100) / 100),
  };
});

const f = (v: number) => v.toFixed(1);
console.log(`${questions.length} questions × ${opts.runs} runs, baseline ${opts.baseline}, ${opts.serverCache ? "the server's search cache (answers not reused)" : 'no search cache'}`);
console.log('| query embedding | this checkout p50 ms | p95 ms | baseline p50 ms | p95 ms | p50 ratio (median of runs) | ratio per run | load avg per run |');
console.log('|---|---|---|---|---|---|---|---|');
for (const s of summary) {
  console.log(
    `| ${s.pass === 'miss' ? 'not cached: the encoder runs' : 'cached'} | ${f(s.current_p50)} | ${f(s.current_p95)} | ${f(s.baseline_p50)} | ${f(s.baseline_p95)} | ${s.ratio_p50.toFixed(2)}× | ${s.ratios.join(', ')} | ${s.loads.join(', ')} |`,
  );
}
await mkdir(dirname(resolve(opts.json)), { recursive: true });
await writeFile(resolve(opts.json), JSON.stringify({ baseline: opts.baseline, quick: opts.quick ?? false, server_cache: opts.serverCache ?? false, questions: questions.length, runs: opts.runs, summary, quality }, null, 2) + '\n');
console.log(`wrote ${opts.json}`);
await Promise.all(stores.map((store) => store.close()));

