// `npm run bench:load [-- --seconds N]`: throughput and latency of the local
// server over HTTP on loopback, measured the way an agent calls it. Starts its own
// server on a fresh data directory (the starter corpus, the bundled encoder), makes
// an unlimited key, then measures with autocannon:
//
//   - search_knowledge at concurrency 1, 4 and 16, with the query's embedding cached
//     (the same question) and not cached (a new question every call);
//   - ping latency while 2,000 records are imported through the server and
//     cache-miss searches run at concurrency 4.
//
// Prints a table and writes bench-results/load.json. Bounded (about two minutes at
// the default 10 s per run), loopback only, nothing left behind.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin', 'chatctx.js');
const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 10;
const dir = mkdtempSync(join(tmpdir(), 'chatctx-bench-'));
const dataDir = join(dir, 'data');

function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`chatctx ${args.join(' ')} exited ${code}`))));
  });
}

/** The server, once it answers and its records are embedded. */
function serve() {
  const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, 'serve', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
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

/** One load run; resolves with autocannon's result and every response time it saw. */
function measure(url, key, connections, uniqueQueries) {
  let n = 0;
  const times = [];
  const instance = autocannon({
    url,
    method: 'POST',
    headers: HEADERS(key),
    connections,
    duration: seconds,
    requests: [
      uniqueQueries
        ? { setupRequest: (request) => ({ ...request, body: search(`retry transient failures with backoff and jitter, case ${Date.now()}-${n++}`) }) }
        : { body: search('retry transient failures with backoff and jitter') },
    ],
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
  const records = Array.from({ length: 2000 }, (_, i) => ({
    slug: `bench-${i}`,
    title: `Bound queue ${i} in front of a slow dependency`,
    topic: 'reliability',
    summary: 'Workers stall when a downstream call never answers and the queue in front of them grows without bound.',
    recommendation: `Bound queue ${i}, put a deadline on every downstream call, and shed load when the queue is full.`,
    confidence: 'medium',
    sources: [{ title: 'Timers', url: 'https://nodejs.org/api/timers.html' }],
  }));
  const file = join(dir, 'records.json');
  writeFileSync(file, JSON.stringify(records));
  return file;
}

const started = performance.now();
const { url, child } = await serve();
const runs = [];
try {
  const { key } = JSON.parse(await run(['--json', 'keys', 'create', '--name', 'bench']));
  for (const cache of ['hit', 'miss']) {
    for (const connections of [1, 4, 16]) {
      const { result, times } = await measure(url, key, connections, cache === 'miss');
      const row = {
        scenario: `search_knowledge, embedding cache ${cache}`,
        connections,
        requests_per_s: Math.round(result.requests.average),
        p50_ms: Number(percentile(times, 50).toFixed(1)),
        p95_ms: Number(percentile(times, 95).toFixed(1)),
        p99_ms: Number(percentile(times, 99).toFixed(1)),
        non_2xx: result.non2xx,
        errors: result.errors,
        load_average_1m: Number(loadavg()[0].toFixed(2)),
      };
      runs.push(row);
      console.error(`${row.scenario} c${connections}: ${row.requests_per_s} req/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms`);
    }
  }
  const importing = run(['records', 'import', importFile(), '--approve']);
  const background = measure(url, key, 4, true);
  const pings = await pingDuring(url, key, importing);
  background.stop();
  await background;
  const ping = {
    scenario: 'ping during a 2,000-record import and cache-miss searches at concurrency 4',
    pings: pings.length,
    p50_ms: Number(percentile(pings, 50).toFixed(1)),
    p95_ms: Number(percentile(pings, 95).toFixed(1)),
    p99_ms: Number(percentile(pings, 99).toFixed(1)),
    max_ms: Number(Math.max(...pings).toFixed(1)),
    load_average_1m: Number(loadavg()[0].toFixed(2)),
  };
  const report = { cores: cpus().length, node: process.version, seconds_per_run: seconds, runs, ping, total_s: Math.round((performance.now() - started) / 1000) };
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench-results', 'load.json'), JSON.stringify(report, null, 2) + '\n');
  console.log('\n| scenario | connections | req/s | p50 ms | p95 ms | p99 ms | load avg |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of runs) console.log(`| ${r.scenario} | ${r.connections} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p95_ms} | ${r.p99_ms} | ${r.load_average_1m} |`);
  console.log(`\n${ping.scenario}: ${ping.pings} pings, p50 ${ping.p50_ms} ms, p95 ${ping.p95_ms} ms, p99 ${ping.p99_ms} ms, max ${ping.max_ms} ms (load average ${ping.load_average_1m})`);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}
