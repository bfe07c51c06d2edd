/**
 * The report of `bench:cold-start` (`cold-start.sh`): the memory measure it runs after
 * the timings, and the section of docs/testing.md rendered from its JSON (`--docs`
 * writes docs/bench/cold-start.json and the section; test/architecture/bench-tables.test.ts
 * checks the two agree). Plain JavaScript, run by node from the shell script.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { median, replaceSection } from './load-report.mjs';

const MIB = 1024;

/**
 * Samples taken once a second after `embeddings_current`: memory counts as settled when
 * the last SETTLE_SAMPLES of them lie within SETTLE_MIB of each other. V8 gives back the
 * pages of garbage from the start (the first start's import) some seconds after the work
 * ends, so a sample taken at once would count memory the server does not keep; the
 * issue's question is what a server holds for as long as it runs.
 */
const SETTLE_SAMPLES = 10;
const SETTLE_MIB = 2;
const SETTLE_LIMIT_S = 90;

/** Resident and peak memory of `pid` in MiB (Linux /proc). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rss_mib: Math.round(kib('VmRSS') / MIB), peak_mib: Math.round(kib('VmHWM') / MIB) };
}

/** Samples `pid` once a second until its resident memory settles (or SETTLE_LIMIT_S passes); the last sample and how long it took. */
async function settledMemory(pid, samples) {
  const seen = [];
  for (let second = 1; second <= SETTLE_LIMIT_S; second++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    seen.push(memoryOf(pid));
    const last = seen.slice(-samples).map((m) => m.rss_mib);
    if (last.length === samples && Math.max(...last) - Math.min(...last) <= SETTLE_MIB) return { ...seen.at(-1), settled_after_s: second };
  }
  return { ...seen.at(-1), settled_after_s: null };
}

/** The server's settled resident and peak memory in MiB, once it has said `embeddings_current`. */
function serveAndMeasure(serveScript, dataDir, port, samples) {
  return new Promise((resolve, reject) => {
    // `sh` execs the server in its place (bin/serve.sh), so the pid is the server's.
    const child = spawn('sh', [serveScript], { env: { ...process.env, CHATCTX_DATA_DIR: dataDir, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000 + SETTLE_LIMIT_S * 1000);
    const look = (chunk) => {
      out = (out + chunk).slice(-20_000);
      if (!/"event":"(embeddings_current|embedding_failed)"/.test(out)) return;
      child.stdout.off('data', look);
      child.stderr.off('data', look);
      settledMemory(child.pid, samples)
        .then(resolve, reject)
        .finally(() => child.kill('SIGTERM'));
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before it was measured`));
    });
  }).finally(() => new Promise((resolve) => setTimeout(resolve, 1500)));
}

/** `rounds` first starts, each followed by a restart of its data directory: resident memory of each. */
export async function measureMemory(serveScript, dir, port, rounds, samples = SETTLE_SAMPLES) {
  const first = [];
  const restart = [];
  for (let round = 0; round < rounds; round++) {
    const dataDir = `${dir}/memory-${round}`;
    first.push(await serveAndMeasure(serveScript, dataDir, port, samples));
    restart.push(await serveAndMeasure(serveScript, dataDir, port, samples));
    rmSync(dataDir, { recursive: true, force: true });
  }
  const pick = (list, field) => median(list.map((m) => m[field]));
  return {
    rounds,
    settle: { samples, within_mib: SETTLE_MIB, first_start_s: first.map((m) => m.settled_after_s), restart_s: restart.map((m) => m.settled_after_s) },
    first_start: { rss_mib: pick(first, 'rss_mib'), peak_mib: pick(first, 'peak_mib'), rss_each_run: first.map((m) => m.rss_mib) },
    restart: { rss_mib: pick(restart, 'rss_mib'), peak_mib: pick(restart, 'peak_mib'), rss_each_run: restart.map((m) => m.rss_mib) },
    first_over_restart: Number((pick(first, 'rss_mib') / pick(restart, 'rss_mib')).toFixed(2)),
    load_average_1m: Number(loadavg()[0].toFixed(2)),
  };
}

const seconds = (s) => `${s.toFixed(2)} s`;

const waits = (list) => list.map((s) => (s === null ? `over ${SETTLE_LIMIT_S}` : `${s}`)).join(', ');

/** How the memory was read: sampled until settled (reports from before the rule was read 2 s after \`embeddings_current\`). */
const settleRule = (settle) =>
  settle
    ? `; each read once ${settle.samples} samples a second apart lay within ${settle.within_mib} MiB, which took ${waits(settle.first_start_s)} s after first starts and ${waits(settle.restart_s)} s after restarts`
    : '; read 2 s after the embeddings were stored';

/** The markdown of docs/testing.md's cold-start section. */
export function renderColdStartSection(report) {
  const m = report.memory;
  return [
    `Measured ${report.date.slice(0, 10)} on ${report.cores} cores, Node ${report.node}: from launching \`chatctx serve\` as \`npm start\` does (\`bin/serve.sh\`) until the MCP endpoint answers a \`ping\` (which waits until the server is ready), median of ${report.runs} runs (load average ${report.load_average_1m} at the start):`,
    '',
    '| scenario | median | min | max |',
    '|---|---|---|---|',
    ...report.results.map((r) => `| ${r.scenario} | ${seconds(r.median_s)} | ${seconds(r.min_s)} | ${seconds(r.max_s)} |`),
    '',
    `Resident memory (RSS) once the starter corpus is embedded and the server settled, with the bundled encoder, median of ${m.rounds} first starts and a restart after each (load average ${m.load_average_1m})${settleRule(m.settle)}:`,
    '',
    '| after | RSS MiB | peak MiB | RSS of each run |',
    '|---|---|---|---|',
    `| a first start | ${m.first_start.rss_mib} | ${m.first_start.peak_mib} | ${m.first_start.rss_each_run.join(', ')} |`,
    `| a restart | ${m.restart.rss_mib} | ${m.restart.peak_mib} | ${m.restart.rss_each_run.join(', ')} |`,
    '',
    `A first start holds ${m.first_over_restart} times what a restart holds.`,
  ].join('\n');
}

/** `--docs`: the report as docs/bench/cold-start.json, and docs/testing.md's section rendered from it. */
export function recordInDocs(root, report) {
  mkdirSync(`${root}/docs/bench`, { recursive: true });
  writeFileSync(`${root}/docs/bench/cold-start.json`, JSON.stringify(report, null, 2) + '\n');
  const doc = `${root}/docs/testing.md`;
  writeFileSync(doc, replaceSection(readFileSync(doc, 'utf8'), 'bench-cold-start', renderColdStartSection(report)));
}
