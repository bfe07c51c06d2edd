// `npm run bench:load [-- --seconds N] [--runs N] [--quick] [--out FILE] [--docs]`: throughput and
// latency of the local server over HTTP on loopback, measured the way an agent calls
// it. Starts its own server on a fresh data directory (the starter corpus, the bundled
// encoder), makes an unlimited key, then measures with autocannon:
//
//   - search_knowledge at concurrency 1, 4 and 16: the same question every call (its
//     answer and embedding cached), a new question every call (the encoder runs), and
//     questions asked before but too many for the answer cache (embedding cached,
//     answer computed); each row says how many answers came from the answer cache,
//     counted from the server's own log; and MCP `ping` over the same path, the cost
//     of a request that does nothing;
//   - the server's CPU time per request in each row, all threads and the main thread
//     alone (Linux: read from /proc; elsewhere not reported), and the computed answer
//     against ping and the cached answer within each run (load-report.mjs);
//   - ping latency while 500 records that pass the approval gates (each run its own)
//     (`reviewed-records.mjs`) are imported through the server and cache-miss
//     searches run at concurrency 4.
//
// Every row is measured `--runs` times (default 3) and reported as medians. Prints a
// table and writes bench-results/load.json (or `--out`); `--docs` also writes
// docs/bench/load.json and the section of docs/testing.md rendered from it. Bounded
// (about eight minutes at the default 10 s per row and 3 runs), loopback only. The temporary data directory
// goes on every exit: success, failure and SIGINT/SIGTERM; a failure exits 1.
// `--quick` (the benchmark test) runs 0.25 s per run at concurrency 1 and 4, 10 known
// questions and 10 imported records, on a store without the starter corpus: it checks
// the benchmark still runs, not timings.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reviewedRecords } from './reviewed-records.mjs';
import { aggregateRatios, aggregateRows, median, percentile, renderLoadSection, replaceSection } from './load-report.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'chatctx.js');
const SERVE_SCRIPT = join(ROOT, 'bin', 'serve.sh');

/** The options; an unknown option or a bad number throws before anything is created. */
function readOptions() {
  const { values } = parseArgs({
    options: { seconds: { type: 'string' }, runs: { type: 'string' }, quick: { type: 'boolean' }, out: { type: 'string' }, docs: { type: 'boolean' } },
    strict: true,
  });
  const quick = values.quick === true;
  const seconds = Number(values.seconds ?? (quick ? 0.25 : 10));
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds must be a positive number, not ${values.seconds}`);
  const runs = Number(values.runs ?? (quick ? 1 : 3));
  if (!Number.isInteger(runs) || runs < 1 || runs > 9) throw new Error(`--runs must be a whole number from 1 to 9, not ${values.runs}`);
  if (values.docs && quick) throw new Error('--docs records a full run; it cannot be combined with --quick');
  return {
    quick,
    seconds,
    runs,
    docs: values.docs === true,
    out: resolve(values.out ?? join(ROOT, 'bench-results', 'load.json')),
    connections: quick ? [1, 4] : [1, 4, 16],
    // More than the server keeps answers for (500), so that none is answered from the cache; a few when quick.
    knownQuestions: quick ? 10 : 1000,
    // Per import round (one a run): long enough for over a thousand pings while the encoder embeds them.
    records: quick ? 10 : 500,
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
const served = { answerHits: 0, searches: 0, encoderRuns: 0 };
function countSearches(chunk) {
  for (const line of String(chunk).split('\n')) {
    if (!line.includes('"event":"search"')) continue;
    served.searches += 1;
    if (line.includes('"answer_cache":"hit"')) served.answerHits += 1;
    if (line.includes('"embedding_cache":"miss"')) served.encoderRuns += 1;
  }
}

/** The server, once it answers and its records are embedded. */
function serve() {
  // As `npm start` runs it (bin/serve.sh), which execs the server in its place.
  const child = spawn('sh', [SERVE_SCRIPT, '--port', '0'], { cwd: ROOT, env: { ...options.env, CHATCTX_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
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
const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

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
  const next = scenario === 'ping' ? undefined : questions[scenario];
  const instance = autocannon({
    url,
    method: 'POST',
    headers: HEADERS(key),
    connections,
    duration,
    // autocannon samples (and checks its stop time) once per sampleInt: at most once a second, so a run shorter than that ends on time.
    sampleInt: Math.min(1000, duration * 1000),
    requests: [{ setupRequest: (request) => ({ ...request, body: next ? search(next()) : PING }) }],
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const done = instance.then((result) => ({ result, times }));
  done.stop = () => instance.stop();
  return done;
}


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

/** A file of records no earlier round imported (each round's slugs and text are its own). */
function importFile(round) {
  const records = reviewedRecords(options.records, `bench${round}`);
  const file = join(dir, `records-${round}.json`);
  writeFileSync(file, JSON.stringify(records));
  return file;
}

const SCENARIOS = {
  hit: 'search_knowledge, same question every call (answer cached)',
  miss: 'search_knowledge, new question every call (encoder runs)',
  known: 'search_knowledge, known questions, answer not cached (embedding cached)',
  ping: 'ping (no tool runs)',
};

/** CPU time the server has used, in ms: every thread, and its main thread alone; undefined where /proc is not there. */
function serverCpu() {
  const pid = server?.pid;
  try {
    let all = 0;
    let main = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // After the command name in parentheses: utime and stime are fields 14 and 15, in clock ticks (100 a second).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      all += ms;
      if (tid === String(pid)) main = ms;
    }
    return { all, main };
  } catch {
    return undefined;
  }
}

/** One row: a scenario at a concurrency, with the server's CPU time per request. */
async function measureRow(url, key, scenario, connections) {
  const before = { ...served };
  const cpuBefore = serverCpu();
  const { result, times } = await measure(url, key, connections, scenario);
  await new Promise((resolve) => setTimeout(resolve, 200)); // the server's last log lines
  const cpuAfter = serverCpu();
  const requests = result.requests.total;
  const perRequest = (field) => (cpuBefore && cpuAfter && requests > 0 ? Number(((cpuAfter[field] - cpuBefore[field]) / requests).toFixed(3)) : null);
  return {
    scenario: SCENARIOS[scenario],
    key: scenario,
    connections,
    // A run shorter than a second (quick) has no one-second samples to average: completed requests over its duration then.
    requests_per_s: Math.round(seconds >= 1 ? result.requests.average : requests / result.duration),
    p50_ms: Number(percentile(times, 50).toFixed(1)),
    p95_ms: Number(percentile(times, 95).toFixed(1)),
    p99_ms: Number(percentile(times, 99).toFixed(1)),
    cpu_ms_per_request: perRequest('all'),
    main_thread_cpu_ms_per_request: perRequest('main'),
    answer_cache_hits: scenario === 'ping' ? '–' : `${served.answerHits - before.answerHits}/${served.searches - before.searches}`,
    encoder_runs: served.encoderRuns - before.encoderRuns,
    non_2xx: result.non2xx,
    errors: result.errors,
    load_average_1m: Number(loadavg()[0].toFixed(2)),
  };
}

/** One run: a row per scenario and concurrency. The first run asks every known question once, so that their embeddings are cached. */
async function measureSearches(url, key, first) {
  const rows = [];
  for (const scenario of ['hit', 'miss', 'known', 'ping']) {
    // One at a time: queued behind each other, some would pass the encoder's deadline and be answered without an embedding, which then is not cached.
    if (scenario === 'known' && first) await autocannon({ url, method: 'POST', headers: HEADERS(key), connections: 1, amount: KNOWN_QUESTIONS, requests: [{ setupRequest: (r) => ({ ...r, body: search(questions.known()) }) }] });
    for (const connections of options.connections) {
      const row = await measureRow(url, key, scenario, connections);
      rows.push(row);
      console.error(`${row.scenario} c${connections}: ${row.requests_per_s} req/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, CPU ${row.cpu_ms_per_request} ms a request`);
    }
  }
  return rows;
}

/** Ping round trips while `importFile()`'s records are imported and cache-miss searches run. */
async function measurePings(url, key, round) {
  const importing = run(['records', 'import', importFile(round), '--approve']);
  const background = measure(url, key, 4, 'miss', 3600);
  // A failed import still ends the pings; its error is thrown below, after the searches stop.
  const pings = await pingDuring(url, key, importing.catch(() => undefined));
  background.stop();
  await background;
  await importing;
  return {
    pings: pings.length,
    p50_ms: Number(percentile(pings, 50).toFixed(1)),
    p95_ms: Number(percentile(pings, 95).toFixed(1)),
    p99_ms: Number(percentile(pings, 99).toFixed(1)),
    max_ms: Number(Math.max(...pings).toFixed(1)),
    load_average_1m: Number(loadavg()[0].toFixed(2)),
  };
}

/** The import rounds' medians. */
function pingSummary(rounds) {
  const pick = (field) => median(rounds.map((r) => r[field]));
  return {
    scenario: `Ping every 20 ms during a ${options.records.toLocaleString('en')}-record import with new-question searches at concurrency 4`,
    runs: rounds.length,
    pings_each_run: rounds.map((r) => r.pings),
    p50_ms: pick('p50_ms'),
    p95_ms: pick('p95_ms'),
    p99_ms: pick('p99_ms'),
    max_ms: pick('max_ms'),
    p99_ms_each_run: rounds.map((r) => r.p99_ms),
    load_average_1m: pick('load_average_1m'),
  };
}

function printReport(report) {
  console.log(`\n${renderLoadSection(report)}`);
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
  const searchRuns = [];
  for (let round = 0; round < options.runs; round++) searchRuns.push(await measureSearches(url, key, round === 0));
  const importRounds = [];
  for (let round = 0; round < options.runs; round++) importRounds.push(await measurePings(url, key, round));
  const report = {
    cores: cpus().length,
    node: process.version,
    date: new Date().toISOString(),
    quick: options.quick,
    seconds_per_run: seconds,
    runs_per_row: options.runs,
    runs: aggregateRows(searchRuns),
    ratios: aggregateRatios(searchRuns),
    ping: pingSummary(importRounds),
    total_s: Math.round((performance.now() - started) / 1000),
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, JSON.stringify(report, null, 2) + '\n');
  if (options.docs) recordInDocs(report);
  printReport(report);
}

/** `--docs`: the report as docs/bench/load.json, and docs/testing.md's section rendered from it. */
function recordInDocs(report) {
  const json = join(ROOT, 'docs', 'bench', 'load.json');
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, JSON.stringify(report, null, 2) + '\n');
  const doc = join(ROOT, 'docs', 'testing.md');
  writeFileSync(doc, replaceSection(readFileSync(doc, 'utf8'), 'bench-load', renderLoadSection(report)));
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
