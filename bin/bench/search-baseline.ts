/**
 * `npm run bench:search-baseline -- --baseline DIR [--runs 3] [--questions 200] [--[no-]server-cache] [--quality] [--json FILE] [--quick] [--docs]`
 *
 * `search_knowledge` in process on the starter corpus, this checkout against an
 * earlier one, side by side in one process: each version opens its own in-memory
 * store with its own starter corpus and code (DIR is a checkout of another commit,
 * e.g. `git worktree add ../baseline <commit>`, whose node_modules resolve), and both
 * answer the same questions, alternating which goes first. Each run asks every
 * question twice: first with a query embedding no store has seen (the encoder runs),
 * then again (the embedding is in the store's cache). No answer cache: every search
 * ranks, judges and shapes. The encoder is one USE-lite instance both share.
 * Each run asks them twice over: once with the local server's search cache (records,
 * synonyms and profiles kept per corpus generation) with answer reuse turned off, what
 * a new question costs on a running server, and once with no search cache, each with
 * questions of its own. `--server-cache` or `--no-server-cache` keeps one of the two.
 *
 * Prints p50 and p95 per version, cache and pass, the ratio of this checkout's p50 to
 * the baseline's within each run (the figure that survives a noisy machine), the
 * median over runs, and the load average beside each run; writes the same as JSON,
 * with the commit of each checkout (and whether it had changes outside docs/).
 * `--docs` also writes it to docs/bench/search-baseline.json and docs/testing.md's
 * table rendered from it.
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
import { execFileSync } from 'node:child_process';
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
import { machine, recordInDocs, renderSearchBaseline } from './docs-report.mjs';

const opts = new Command('bench-search-baseline')
  .requiredOption('--baseline <dir>', 'a checkout of the commit to compare with')
  .option('--runs <n>', 'runs (median reported)', (v) => Number(v), 3)
  .option('--questions <n>', 'questions per run, a fixed sample of both evaluation sets', (v) => Number(v), 200)
  .option('--quality', "also answer both evaluation sets with both versions and print their tables")
  .option('--server-cache', "only with the local server's search cache (records and settings per corpus generation), answer reuse off")
  .option('--no-server-cache', 'only with no search cache')
  .option('--json <file>', 'where to write the report', '.chatctx/bench/search-baseline.json')
  .option('--cache-dir <dir>', 'document embedding cache', '.chatctx/eval-cache')
  .option('--quick', 'one run of 3 questions over 8 starter records: checks that the benchmark runs')
  .option('--docs', "also write docs/bench/search-baseline.json and docs/testing.md's table from it")
  .parse()
  .opts<{ baseline: string; runs: number; questions: number; quality?: boolean; serverCache?: boolean; json: string; cacheDir: string; quick?: boolean; docs?: boolean }>();
if (opts.quick) Object.assign(opts, { runs: 1, questions: 3 });
type CacheMode = 'server' | 'none';
const CACHES: readonly CacheMode[] = opts.serverCache === undefined ? ['server', 'none'] : opts.serverCache ? ['server'] : ['none'];
/** Starter records per store when quick: embedding all of them with an empty cache takes minutes. */
const QUICK_RECORDS = 8;
if (![opts.runs, opts.questions].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error(`bench:search-baseline: --runs and --questions take positive whole numbers (got ${opts.runs}, ${opts.questions})`);
  process.exit(2);
}

/** The commit a checkout is at, and whether it has changes outside docs/ (a `--docs` run rewrites those); no commit outside a git work tree. */
function checkout(dir: string): { commit: string | null; dirty: boolean } {
  const git = (...args: string[]) => execFileSync('git', ['-C', resolve(dir), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain', '--', '.', ':(exclude)docs').length > 0 };
  } catch {
    return { commit: null, dirty: false };
  }
}
const measuredOn = machine();
const current = checkout('.');
const baseline = checkout(opts.baseline);
if (opts.docs && (opts.quick || current.commit === null || baseline.commit === null)) {
  console.error(`bench:search-baseline: --docs records a full run (not with --quick) between two git checkouts (this one: ${current.commit ?? 'none'}, ${opts.baseline}: ${baseline.commit ?? 'none'})`);
  process.exit(2);
}

type Search = (args: Record<string, unknown>) => Promise<SearchKnowledgeOutput>;

/** Opens a store with `root`'s own code, schema and starter corpus, and returns its search with the server's cache and without. */
async function version(root: string, embedder: Embedder): Promise<Record<CacheMode, Search>> {
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
  const deps = { sql, secrets: { pepper: async () => pepper }, embedder, logger: createLogger(() => {}) };
  stores.push(sql);
  const withCache = { ...deps, cache: new NoAnswerReuse() };
  return {
    server: async (args) => searchKnowledge(withCache, searchKnowledgeInput.parse(args)),
    none: async (args) => searchKnowledge(deps, searchKnowledgeInput.parse(args)),
  };
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
await Promise.all(Object.values(versions).flatMap((searches) => CACHES.map((cache) => searches[cache]({ query: 'warm up the statements and the tokenizer' }))));

const quality: Record<string, Record<string, HonestyMetrics>> = {};
if (opts.quality) {
  const sets = [await loadQuestionSet('real', resolve('test/fixtures/real-questions'), 'record'), await loadQuestionSet('written', resolve('test/fixtures/guidance-eval'), 'id')];
  for (const set of sets) {
    for (const [name, searches] of Object.entries(versions)) {
      const search = searches[CACHES[0]!];
      quality[`${set.name}, ${name === 'current' ? 'this checkout' : 'baseline'}`] = byHalf(set, await answerAll(set.questions, (args) => search(args as Record<string, unknown>)));
    }
  }
  console.log(formatHonesty(quality));

}

type Pass = 'miss' | 'hit';
interface RunResult {
  load: number[];
  ms: Record<CacheMode, Record<'current' | 'baseline', Record<Pass, number[]>>>;
}

/** One run: for each cache mode (their order alternating by run), every question new then again, the versions in turn. */
async function measureRun(run: number): Promise<RunResult> {
  const times = () => ({ current: { miss: [] as number[], hit: [] as number[] }, baseline: { miss: [] as number[], hit: [] as number[] } });
  const result: RunResult = { load: loadavg(), ms: { server: times(), none: times() } };
  for (const cache of run % 2 === 0 ? CACHES : [...CACHES].reverse()) {
    for (const pass of ['miss', 'hit'] as const) {
      for (const [i, base] of questions.entries()) {
        // A new text per run and cache mode, so the first pass is a real encoder call in both stores.
        const query = `${base} (run ${run + 1}, ${cache})`;
        const order = (i + run) % 2 === 0 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const);
        for (const name of order) {
          const started = performance.now();
          await versions[name][cache]({ query });
          result.ms[cache][name][pass].push(performance.now() - started);
        }
      }
    }
  }
  return result;
}

const median = (values: number[]) => percentile(values, 50);
const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

/** Per cache mode and pass: the medians over runs of each run's p50 and p95, and each run's ratio of p50s. */
function summarise(runs: readonly RunResult[]) {
  return CACHES.flatMap((cache) =>
    (['miss', 'hit'] as const).map((pass) => {
      const perRun = runs.map((r) => {
        const of = (name: 'current' | 'baseline') => ({ p50: median(r.ms[cache][name][pass]), p95: percentile(r.ms[cache][name][pass], 95) });
        return { current: of('current'), baseline: of('baseline'), load: r.load[0]! };
      });
      return {
        cache,
        pass,
        current_p50: round(median(perRun.map((r) => r.current.p50)), 2),
        current_p95: round(median(perRun.map((r) => r.current.p95)), 2),
        baseline_p50: round(median(perRun.map((r) => r.baseline.p50)), 2),
        baseline_p95: round(median(perRun.map((r) => r.baseline.p95)), 2),
        ratio_p50: round(median(perRun.map((r) => r.current.p50 / r.baseline.p50)), 3),
        ratios: perRun.map((r) => round(r.current.p50 / r.baseline.p50, 3)),
        loads: perRun.map((r) => round(r.load, 2)),
      };
    }),
  );
}

const runs: RunResult[] = [];
for (let run = 0; run < opts.runs; run++) {
  runs.push(await measureRun(run));
  console.error(`run ${run + 1}/${opts.runs} done (load ${runs.at(-1)!.load.map((l) => l.toFixed(2)).join(' ')})`);
}
const report = {
  ...measuredOn,
  quick: opts.quick ?? false,
  baseline: opts.baseline,
  commit: current.commit,
  dirty: current.dirty,
  baseline_commit: baseline.commit,
  baseline_dirty: baseline.dirty,
  caches: CACHES,
  questions: questions.length,
  runs: opts.runs,
  summary: summarise(runs),
  quality,
};
console.log(renderSearchBaseline(report));
await mkdir(dirname(resolve(opts.json)), { recursive: true });
await writeFile(resolve(opts.json), JSON.stringify(report, null, 2) + '\n');
console.log(`wrote ${opts.json}`);
if (opts.docs) console.log(`wrote ${recordInDocs('search-baseline', report).join(' and ')}`);
await Promise.all(stores.map((store) => store.close()));
