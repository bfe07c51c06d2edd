#!/usr/bin/env node
// Wall time of a local CLI command that needs no server: `chatctx keys list` on a
// data directory that already holds a store (made by a first, untimed run). Runs
// the command RUNS times (default 9) as a fresh process, prints the median, the
// spread and the load average, and writes bench-results/cli-start.json.
//   node bin/bench/cli-start.mjs [--runs N] [--label TEXT]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const runs = Number(arg('--runs', '9'));
const label = arg('--label', 'keys list');
const dir = mkdtempSync(join(tmpdir(), 'chatctx-cli-start-'));
const command = [join(root, 'bin/chatctx.js'), '--data-dir', join(dir, 'data'), 'keys', 'list'];

const once = () => {
  const started = performance.now();
  const run = spawnSync(process.execPath, command, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`keys list failed: ${run.stderr}`);
  return performance.now() - started;
};

try {
  once(); // creates the store (and compiles the CLI if a source changed)
  const load = loadavg()[0];
  const times = Array.from({ length: runs }, once).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const result = {
    command: 'chatctx keys list',
    label,
    runs,
    median_ms: Math.round(median),
    min_ms: Math.round(times[0]),
    max_ms: Math.round(times.at(-1)),
    load_average_1m: Math.round(load * 100) / 100,
    node: process.version,
  };
  console.log('| command | runs | median ms | min ms | max ms | load avg (1 min) |');
  console.log('|---|---|---|---|---|---|');
  console.log(`| ${result.command} (${label}) | ${runs} | ${result.median_ms} | ${result.min_ms} | ${result.max_ms} | ${result.load_average_1m} |`);
  mkdirSync(join(root, 'bench-results'), { recursive: true });
  writeFileSync(join(root, 'bench-results/cli-start.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
