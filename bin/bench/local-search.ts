/**
 * `npm run bench:local-search -- --dataset ../shared/eval/scifact [--restarts N] [--queries N] [--http-searches N] [--http-runs N] [--data-dir DIR] [--documents N] [--out FILE] [--quick] [--docs]`
 *
 * `search_knowledge` on the local server over HTTP, on a store of SciFact's size.
 *
 * 1. Is the first search after a restart as fast as the ones after it? Builds (once) a
 * data directory holding the SciFact corpus as approved records (5,183 of them,
 * embedded with the bundled encoder; the evaluation's embedding cache in
 * `.chatctx/eval-cache` makes that quick), then restarts `chatctx serve` on it
 * several times. After each restart it sends, over HTTP, one new question as soon as
 * the server says it is ready, then more new questions one at a time (each a query
 * embedding the encoder has not seen, as a user's would be). Prints, per restart,
 * the time to ready, the first search and the median of the rest, with the load
 * average.
 * 2. What a search costs over HTTP with its query embedding not cached (the encoder
 * runs) and cached (the answer is still computed): see `overHttp`.
 *
 * Writes bench-results/local-search.json (or `--out`); `--docs` also writes
 * docs/bench/local-search.json and both tables of docs/quality.md rendered from it
 * (it needs the HTTP runs). `--quick` (the benchmark test)
 * builds a store of the first 10 documents, without the starter corpus, and times one
 * restart with two searches, without the HTTP runs (each starts two more servers): it
 * checks the benchmark runs, not how fast. A missing dataset is an error that says
 * where it was looked for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { DataDirLock, storePath } from '../../lambdas/local/data-dir.ts';
import { openLocalStore } from '../../lambdas/local/local-store.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { createEmbedder } from '../../lambdas/embeddings/embedder-factory.ts';
import { CachedEmbedder } from '../eval/cached-embedder.ts';
import { loadBeirDataset } from '../eval/beir.ts';
import { beirDocToRecord } from '../eval/run-eval.ts';
import { machine, recordInDocs, renderLocalSearchHttp, renderLocalSearchRestarts } from './docs-report.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'chatctx.js');
const SERVE_SCRIPT = join(ROOT, 'bin', 'serve.sh');

const opts = new Command('bench-local-search')
  .requiredOption('--dataset <dir>', 'BEIR folder (corpus.jsonl, queries.jsonl)')
  .option('--restarts <n>', 'server restarts to time', (v) => Number(v), 5)
  .option('--queries <n>', 'searches after each restart (the first one included)', (v) => Number(v), 21)
  .option('--http-searches <n>', 'searches per kind (embedding cached and not) over HTTP', (v) => Number(v), 100)
  .option('--http-runs <n>', 'runs of the HTTP measurement (each with new questions); the table shows their median', (v) => Number(v), 3)
  .option('--data-dir <dir>', 'keep the built store here and reuse it next time (default: a temporary folder)')
  .option('--documents <n>', 'only the first N documents of the corpus (default: all)', (v) => Number(v))
  .option('--cache-dir <dir>', 'document embedding cache', resolve(ROOT, '.chatctx/eval-cache'))
  .option('--out <file>', 'where the JSON report goes', join(ROOT, 'bench-results', 'local-search.json'))
  .option('--quick', 'a 10-document store, one restart, two searches: checks that the benchmark runs')
  .option('--docs', "also write docs/bench/local-search.json and docs/quality.md's two tables from it")
  .parse()
  .opts<{ dataset: string; restarts: number; queries: number; httpSearches: number; httpRuns: number; dataDir?: string; documents?: number; cacheDir: string; out: string; quick?: boolean; docs?: boolean }>();
if (opts.docs && (opts.quick || opts.httpSearches === 0)) {
  console.error('bench local-search: --docs records a full run, HTTP searches included; not with --quick or --http-searches 0');
  process.exit(2);
}
if (opts.quick) Object.assign(opts, { restarts: 1, queries: 2, httpSearches: 0, documents: 10 });
// Quick: no starter corpus, so the first start does not embed 246 records beside the 10.
const CHILD_ENV = opts.quick ? { ...process.env, CHATCTX_STARTER_CORPUS: '0' } : process.env;
if (![opts.restarts, opts.queries, opts.httpRuns, opts.documents ?? 1].every((n) => Number.isInteger(n) && n >= 1) || !(Number.isInteger(opts.httpSearches) && opts.httpSearches >= 0)) {
  console.error('bench local-search: --restarts, --queries, --http-runs and --documents take positive whole numbers, --http-searches zero or more');
  process.exit(2);
}
if (!existsSync(join(resolve(opts.dataset), 'corpus.jsonl'))) {
  console.error(`bench local-search: no BEIR dataset at ${resolve(opts.dataset)} (corpus.jsonl, queries.jsonl); see docs/quality.md for where it comes from`);
  process.exit(2);
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const round = (ms: number) => Math.round(ms * 10) / 10;
/** Warms a new server before the timed searches of `overHttp`. */
const WARM_QUESTION = 'which treatments lower blood pressure';

/** The corpus as approved, embedded records, written straight into the data directory's store. */
async function buildStore(dataDir: string, corpus: Awaited<ReturnType<typeof loadBeirDataset>>['corpus']): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = await DataDirLock.tryAcquire(dataDir, 'bench');
  if (!lock) throw new Error(`${dataDir} is in use`);
  const store = await openLocalStore(lock);
  const inner = await createEmbedder({ provider: 'use-lite' });
  try {
    const records = corpus.map((doc) => beirDocToRecord(doc, `scifact-${doc.id.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`));
    for (let start = 0; start < records.length; start += 500) await importRecords(store.sql, records.slice(start, start + 500), { approve: true });
    const embedder = await CachedEmbedder.open(inner!, resolve(opts.cacheDir));
    const { embedded } = await embedRecords(store.sql, embedder, await recordsToEmbed(store.sql, embedder.model), { batchSize: 64 });
    console.error(`built ${dataDir}: ${records.length} records, ${embedded} embedded (${embedder.hits} cached passages, ${embedder.misses} new)`);
  } finally {
    await inner?.close?.();
    await store.close();
    await lock.release();
  }
}

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  /** From launch until the server printed that it serves. */
  readonly readyMs: number;
  readonly output: () => string;
}

/** `chatctx serve` on the data directory, once it prints its URL (it is ready then). */
function serve(dataDir: string, waitForEmbeddings = false): Promise<Served> {
  const started = performance.now();
  // As `npm start` runs it (bin/serve.sh), which execs the server in its place.
  const child = spawn('sh', [SERVE_SCRIPT, '--port', '0'], { cwd: ROOT, env: { ...CHILD_ENV, CHATCTX_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolvePromise, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited ${code}:\n${out}`)));
    const take = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /serving MCP at (\S+\/mcp)/.exec(out)?.[1];
      if (!url || (waitForEmbeddings && !/"event":"(embeddings_current|embedding_failed)"/.test(out))) return;
      child.stdout!.off('data', take);
      child.stderr!.off('data', take);
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      resolvePromise({ child, url, readyMs: performance.now() - started, output: () => out });
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** One `search_knowledge` call over HTTP; its round trip in ms. */
async function search(url: string, key: string, query: string, id: number): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'search_knowledge', arguments: { query } } }),
  });
  const text = await response.text();
  if (!response.ok || !text.includes('"result"')) throw new Error(`search failed (${response.status}): ${text.slice(0, 300)}`);
  return performance.now() - started;
}

/** Searches the server logged, by whether the query embedding was cached. */
function embeddingCacheCounts(output: string): { hit: number; miss: number } {
  const count = (value: string) => output.split('\n').filter((l) => l.includes('"event":"search"') && l.includes(`"embedding_cache":"${value}"`)).length;
  return { hit: count('hit'), miss: count('miss') };
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};

/**
 * `search_knowledge` over HTTP with the query embedding not cached, then cached:
 * new questions (the encoder runs for each), then, after a restart that empties the
 * server's answer cache but keeps the store's embedding cache, the same questions
 * again (the embedding is read, the answer computed). The server's own log says
 * which it was. The first searches of each server are not counted.
 */
async function overHttp(dataDir: string, key: string, questions: readonly string[]) {
  const rows = [];
  for (const kind of ['miss', 'hit'] as const) {
    const server = await serve(dataDir);
    const times: number[] = [];
    try {
      for (let i = 0; i < 3; i++) await search(server.url, key, `${WARM_QUESTION} ${kind} ${i} ${Date.now()}`, i + 1);
      const load = loadavg()[0]!;
      const before = embeddingCacheCounts(server.output());
      for (const [i, q] of questions.entries()) times.push(await search(server.url, key, q, i + 10));
      await new Promise((r) => setTimeout(r, 200));
      const after = embeddingCacheCounts(server.output());
      rows.push({
        embedding: kind === 'miss' ? 'not cached (encoder runs)' : 'cached (answer computed)',
        searches: times.length,
        served_as: `${after.miss - before.miss} miss, ${after.hit - before.hit} hit`,
        p50_ms: round(percentile(times, 50)),
        p95_ms: round(percentile(times, 95)),
        load_average_1m: Math.round(load * 100) / 100,
      });
    } finally {
      await stop(server.child);
    }
  }
  return rows;
}

function runCli(dataDir: string, args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, ...args], { cwd: ROOT, env: CHILD_ENV, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`chatctx ${args.join(' ')} exited ${code}`))));
  });
}

const temporary = opts.dataDir ? undefined : mkdtempSync(join(tmpdir(), 'chatctx-local-search-'));
const dataDir = resolve(opts.dataDir ?? join(temporary!, 'data'));
if (temporary) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (rmSync(temporary, { recursive: true, force: true }), process.exit(130)));
try {
  const dataset = await loadBeirDataset(resolve(opts.dataset));
  const measuredOn = machine();
  const corpus = dataset.corpus.slice(0, opts.documents);
  if (!existsSync(storePath(dataDir))) {
    await buildStore(dataDir, corpus);
    // The first start adds the starter corpus and embeds it: not timed.
    await stop((await serve(dataDir, true)).child);
  }
  const { key } = JSON.parse(await runCli(dataDir, ['--json', 'keys', 'create', '--name', `bench-${Date.now()}`])) as { key: string };
  // Each question is asked once in the whole run, with a run-specific suffix, so no answer or embedding is cached.
  const tag = Date.now().toString(36);
  let next = 0;
  const question = () => {
    const cycle = Math.floor(next / dataset.queries.length);
    return `${dataset.queries[next++ % dataset.queries.length]!.text} (${tag}${cycle > 0 ? `, ${cycle}` : ''})`;
  };
  const rows = [];
  for (let restart = 1; restart <= opts.restarts; restart++) {
    const load = loadavg()[0]!;
    const server = await serve(dataDir);
    const times: number[] = [];
    try {
      for (let i = 0; i < opts.queries; i++) times.push(await search(server.url, key, question(), i + 1));
    } finally {
      await stop(server.child);
    }
    const rest = median(times.slice(1));
    rows.push({ restart, ready_ms: Math.round(server.readyMs), first_ms: round(times[0]!), median_rest_ms: round(rest), ratio: round(times[0]! / rest), load_average_1m: Math.round(load * 100) / 100 });
    console.error(`restart ${restart}: ready ${Math.round(server.readyMs)} ms, first ${round(times[0]!)} ms, then median ${round(rest)} ms`);
  }
  const summary = {
    records: corpus.length,
    restarts: opts.restarts,
    searches_per_restart: opts.queries,
    median_ready_ms: median(rows.map((r) => r.ready_ms)),
    median_first_ms: median(rows.map((r) => r.first_ms)),
    median_rest_ms: median(rows.map((r) => r.median_rest_ms)),
    median_ratio: median(rows.map((r) => r.ratio)),
    node: process.version,
  };
  const report = { ...measuredOn, quick: opts.quick ?? false, first_search: { ...summary, rows }, http: [] as Awaited<ReturnType<typeof overHttp>>[] };
  console.log(renderLocalSearchRestarts(report));
  for (let run = 0; run < (opts.httpSearches > 0 ? opts.httpRuns : 0); run++) report.http.push(await overHttp(dataDir, key, Array.from({ length: opts.httpSearches }, question)));
  if (report.http.length > 0) console.log(`\n${renderLocalSearchHttp(report)}`);
  mkdirSync(dirname(resolve(opts.out)), { recursive: true });
  writeFileSync(resolve(opts.out), JSON.stringify(report, null, 2) + '\n');
  if (opts.docs) console.log(`wrote ${recordInDocs('local-search', report).join(' and ')}`);
} finally {
  if (temporary) rmSync(temporary, { recursive: true, force: true });
}
