// `npm run bench:load [-- --seconds N] [--quick] [--out FILE]`: throughput and
// latency of the local server over HTTP on loopback, measured the way an agent calls
// it. Starts its own server on a fresh data directory (the starter corpus, the bundled
// encoder), makes an unlimited key, then measures with autocannon:
//
//   - search_knowledge at concurrency 1, 4 and 16: the same question every call (its
//     answer and embedding cached), a new question every call (the encoder runs), and
//     questions asked before but too many for the answer cache (embedding cached,
//     answer computed); each row says how many answers came from the answer cache,
//     counted from the server's own log;
//   - ping latency while 2,000 records that pass the approval gates
//     (`reviewed-records.mjs`) are imported through the server and cache-miss
//     searches run at concurrency 4.
//
// Prints a table and writes bench-results/load.json (or `--out`). Bounded (about three
// minutes at the default 10 s per run), loopback only. The temporary data directory
// goes on every exit: success, failure and SIGINT/SIGTERM; a failure exits 1.
// `--quick` (the benchmark test) runs 0.25 s per run at concurrency 1 and 4, 10 known
// questions and 10 imported records, on a store without the starter corpus: it checks
// the benchmark still runs, not timings.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reviewedRecords } from './reviewed-records.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'chatctx.js');

/** The options; an unknown option or a bad number throws before anything is created. */
function readOptions() {
  const { values } = parseArgs({ options: { seconds: { type: 'string' }, quick: { type: 'boolean' }, out: { type: 'string' } }, strict: true });
  const quick = values.quick === true;
  const seconds = Number(values.seconds ?? (quick ? 0.25 : 10));
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds must be a positive number, not ${values.seconds}`);
  return {
    quick,
    seconds,
    out: resolve(values.out ?? join(ROOT, 'bench-results', 'load.json')),
    connections: quick ? [1, 4] : [1, 4, 16],
    // More than the server keeps answers for (500), so that none is answered from the cache; a few when quick.
    knownQuestions: quick ? 10 : 1000,
    records: quick ? 10 : 2000,
    // Quick: no starter corpus, so the first start does not embed 246 records before the first search.
    env: quick ? { ...process.env, CHATCTX_STARTER_CORPUS: '0' } : process.env,
  };
}

let options;
try {
  options = readOptions();
} catch (error) {
  console.error(`bench:load: ${error.message}`);
  process.exit(2);
}
const seconds = options.seconds;
const dir = mkdtempSync(join(tmpdir(), 'chatctx-bench-'));
const dataDir = join(dir, 'data');
/** The server, once started: stopped on every exit path. */
let server;

function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, ...args], { cwd: ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`chatctx ${args.join(' ')} exited ${code}:\n${err}`))));
  });
}

/** Searches the server has logged, by where the answer and the embedding came from. */
const served = { answerHits: 0, searches: 0 };
function countSearches(chunk) {
  for (const line of String(chunk).split('\n')) {
    if (!line.includes('"event":"search"')) continue;
    served.searches += 1;
    if (line.includes('"answer_cache":"hit"')) served.answerHits += 1;
  }
}

/** The server, once it answers and its records are embedded. */
function serve() {
  const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, 'serve', '--port', '0'], { cwd: ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  server = child;
  let out = '';
  const take = (d) => {
    countSearches(d);
    if (out.length < 1e5) out += d;
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited ${code}:\n${out}`)));
    const check = () => {
      const url = /serving MCP at (\S+\/mcp)/.exec(out)?.[1];
      if (url && /"event":"(embeddings_current|embedding_failed)"/.test(out)) resolve({ url, child });
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
  });
}

const HEADERS = (key) => ({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` });
const search = (query, id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'search_knowledge', arguments: { query } } });

/** The questions of each scenario: `next()` gives the next call's question. */
const KNOWN_QUESTIONS = options.knownQuestions;
const questions = {
  hit: () => 'retry transient failures with backoff and jitter',
  miss: (() => {
    let n = 0;
    return () => `retry transient failures with backoff and jitter, case ${Date.now()}-${n++}`;
  })(),
  // Asked in turn: the least recently asked comes next.
  known: (() => {
    let n = 0;
    return () => `how many retries before a circuit breaker opens, variant ${n++ % KNOWN_QUESTIONS}`;
  })(),
};

/** One load run; resolves with autocannon's result and every response time it saw. */
function measure(url, key, connections, scenario, duration = seconds) {
  const times = [];
  const next = questions[scenario];
  const instance = autocannon({
    url,
    method: 'POST',
    headers: HEADERS(key),
    connections,
    duration,
    // autocannon samples (and checks its stop time) once per sampleInt: at most once a second, so a run shorter than that ends on time.
    sampleInt: Math.min(1000, duration * 1000),
    requests: [{ setupRequest: (request) => ({ ...request, body: search(next()) }) }],
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const done = instance.then((result) => ({ result, times }));
  done.stop = () => instance.stop();
  return done;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** Pings every 20 ms while `until` runs; the round trips in ms. */
async function pingDuring(url, key, until) {
  let done = false;
  void until.finally(() => (done = true));
  const times = [];
  for (let id = 1; !done; id++) {
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: HEADERS(key), body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }) });
    await response.text();
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return times;
}

function importFile() {
  const records = reviewedRecords(options.records, 'bench');
  const file = join(dir, 'records.json');
  writeFileSync(file, JSON.stringify(records));
  return file;
}

const SCENARIOS = {
  hit: 'same question every call (answer cached)',
  miss: 'new question every call (encoder runs)',
  known: 'known questions, answer not cached (embedding cached)',
};

/** One table row per scenario and concurrency. */
async function measureSearches(url, key) {
  const runs = [];
  for (const scenario of ['hit', 'miss', 'known']) {
    // Ask every known question once, so that their embeddings are cached.
    if (scenario === 'known') await autocannon({ url, method: 'POST', headers: HEADERS(key), connections: 4, amount: KNOWN_QUESTIONS, requests: [{ setupRequest: (r) => ({ ...r, body: search(questions.known()) }) }] });
    for (const connections of options.connections) {
      const before = { ...served };
      const { result, times } = await measure(url, key, connections, scenario);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the server's last log lines
      const row = {
        scenario: `search_knowledge, ${SCENARIOS[scenario]}`,
        connections,
        // A run shorter than a second (quick) has no one-second samples to average: completed requests over its duration then.
        requests_per_s: Math.round(seconds >= 1 ? result.requests.average : result.requests.total / result.duration),
        p50_ms: Number(percentile(times, 50).toFixed(1)),
        p95_ms: Number(percentile(times, 95).toFixed(1)),
        p99_ms: Number(percentile(times, 99).toFixed(1)),
        answer_cache_hits: `${served.answerHits - before.answerHits}/${served.searches - before.searches}`,
        non_2xx: result.non2xx,
        errors: result.errors,
        load_average_1m: Number(loadavg()[0].toFixed(2)),
      };
      runs.push(row);
      console.error(`${row.scenario} c${connections}: ${row.requests_per_s} req/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms`);
    }
  }
  return runs;
}

/** Ping round trips while the records are imported and cache-miss searches run. */
async function measurePings(url, key) {
  const importing = run(['records', 'import', importFile(), '--approve']);
  const background = measure(url, key, 4, 'miss', 3600);
  // A failed import still ends the pings; its error is thrown below, after the searches stop.
  const pings = await pingDuring(url, key, importing.catch(() => undefined));
  background.stop();
  await background;
  await importing;
  return {
    scenario: `ping during a ${options.records.toLocaleString('en')}-record import and cache-miss searches at concurrency 4`,
    pings: pings.length,
    p50_ms: Number(percentile(pings, 50).toFixed(1)),
    p95_ms: Number(percentile(pings, 95).toFixed(1)),
    p99_ms: Number(percentile(pings, 99).toFixed(1)),
    max_ms: Number(Math.max(...pings).toFixed(1)),
    load_average_1m: Number(loadavg()[0].toFixed(2)),
  };
}

function printReport({ runs, ping }) {
  console.log('\n| scenario | connections | req/s | p50 ms | p95 ms | p99 ms | answers from cache | load avg |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of runs) console.log(`| ${r.scenario} | ${r.connections} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p95_ms} | ${r.p99_ms} | ${r.answer_cache_hits} | ${r.load_average_1m} |`);
  console.log(`\n${ping.scenario}: ${ping.pings} pings, p50 ${ping.p50_ms} ms, p95 ${ping.p95_ms} ms, p99 ${ping.p99_ms} ms, max ${ping.max_ms} ms (load average ${ping.load_average_1m})`);
}

/** Stops the server and removes the data directory; safe to call twice. */
async function cleanUp() {
  const child = server;
  server = undefined;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}

async function main() {
  const started = performance.now();
  const { url } = await serve();
  const { key } = JSON.parse(await run(['--json', 'keys', 'create', '--name', 'bench']));
  const runs = await measureSearches(url, key);
  const ping = await measurePings(url, key);
  const report = { cores: cpus().length, node: process.version, quick: options.quick, seconds_per_run: seconds, runs, ping, total_s: Math.round((performance.now() - started) / 1000) };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, JSON.stringify(report, null, 2) + '\n');
  printReport(report);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`bench:load: ${signal}, stopping the server and removing ${dir}`);
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  await main();
  await cleanUp();
} catch (error) {
  console.error(`bench:load failed: ${error instanceof Error ? error.message : error}`);
  await cleanUp();
  process.exit(1);
}
