#!/usr/bin/env node
// Wall time of a local CLI command that needs no server: `chatctx keys list` on a
// data directory that already holds a store (made by a first, untimed run). Runs
// the command RUNS times (default 9) as a fresh process, prints the median, the
// spread and the load average, and writes bench-results/cli-start.json (or `--out`);
// `--docs` also writes docs/bench/cli-start.json and docs/owners.md's line from it.
//   npm run bench:cli-start [-- --runs N] [--label TEXT] [--out FILE] [--quick] [--docs]
// `--quick` (the benchmark test) times one run: it checks the benchmark runs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machine, recordInDocs, renderCliStart } from './docs-report.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
let args;
try {
  args = parseArgs({ options: { runs: { type: 'string' }, label: { type: 'string' }, out: { type: 'string' }, quick: { type: 'boolean' }, docs: { type: 'boolean' } }, strict: true }).values;
} catch (error) {
  console.error(`cli-start: ${error.message}`);
  process.exit(2);
}
if (args.quick && args.docs) {
  console.error('cli-start: --docs records a full run; it cannot be combined with --quick');
  process.exit(2);
}
const runs = args.quick ? 1 : Number(args.runs ?? '9');
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`cli-start: --runs takes a positive whole number, not ${args.runs}`);
  process.exit(2);
}
const label = args.label ?? 'keys list';
const out = resolve(args.out ?? join(root, 'bench-results', 'cli-start.json'));
const dir = mkdtempSync(join(tmpdir(), 'chatctx-cli-start-'));
// Quick: no starter corpus to import into the new store.
const env = args.quick ? { ...process.env, CHATCTX_STARTER_CORPUS: '0' } : process.env;
const command = [join(root, 'bin/chatctx.js'), '--data-dir', join(dir, 'data'), 'keys', 'list'];

const once = () => {
  const started = performance.now();
  const run = spawnSync(process.execPath, command, { encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`keys list failed: ${run.stderr}`);
  return performance.now() - started;
};

try {
  once(); // creates the store (and compiles the CLI if a source changed)
  const measuredOn = machine();
  const load = loadavg()[0];
  const times = Array.from({ length: runs }, once).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const result = {
    ...measuredOn,
    quick: args.quick === true,
    command: 'chatctx keys list',
    label,
    runs,
    median_ms: Math.round(median),
    min_ms: Math.round(times[0]),
    max_ms: Math.round(times.at(-1)),
    load_average_1m: Math.round(load * 100) / 100,
  };
  console.log(`${label}: ${renderCliStart(result)}`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  if (args.docs) console.log(`wrote ${recordInDocs('cli-start', result).join(' and ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
