/**
 * Benchmarks that cannot rot: every benchmark of `bin/bench/` runs here in its quick
 * mode (tiny sizes, one run) as a child process, and must exit 0 and write its JSON
 * report, parseable and with its top-level keys, to a folder of this test, never to
 * the checkout's `bench-results/`. No timing is asserted: a benchmark measures, a
 * test only checks that it still runs. Each child gets its own TMPDIR, so a
 * temporary folder it leaves behind (`chatctx-*`) shows there, and a failing
 * benchmark must exit non-zero and still remove its temporary data directory. Two
 * run at a time: on two idle cores that halves the file's time, and one core is
 * seldom enough for a benchmark and the server it starts anyway.
 *
 * Skipped, with the reason in the test's name, when a clean clone or a bare machine
 * lacks what a benchmark needs: hyperfine for the cold start, openssl for the
 * evidence checks, the SciFact dataset beside the checkout for the local search.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/local-server.ts';
import {
  renderCliStart,
  renderCollections,
  renderHotPaths,
  renderLocalSearchHttp,
  renderLocalSearchRestarts,
  renderSearchBaseline,
  renderSearchBundle,
  renderVectorPlan,
  renderVerify,
} from '../../bin/bench/docs-report.mjs';
import { renderLoadSection } from '../../bin/bench/load-report.mjs';
import { renderColdStartSection } from '../../bin/bench/cold-start-report.mjs';
import { renderKeywordScaleSection } from '../../bin/bench/keyword-scale-report.mjs';

const TSX = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const SCIFACT = join(REPO_ROOT, '..', 'shared', 'eval', 'scifact');
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'chatctx-benchmarks-test-'));
});
/** A benchmark's own temporary folders in its TMPDIR (tsx keeps its compile cache there too). */
const leftovers = async (tmp: string) => (await readdir(tmp)).filter((name) => name.startsWith('chatctx-'));

/** At most two children at a time. */
let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  while (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** The temporary folders of benchmarks left after it exited. */
  leftovers: string[];
}

/** Runs `command` with a TMPDIR of its own; `whileRunning` may act on the child until it exits (it is told to stop then). */
async function runBenchmark(command: string, args: string[], env: Record<string, string> = {}, whileRunning?: (pid: number, tmp: string) => () => void): Promise<Run> {
  const tmp = await mkdtemp(join(root, 'tmp-'));
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: tmp, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const stop = whileRunning?.(child.pid!, tmp);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  stop?.();
  return { code, signal, stderr, leftovers: await leftovers(tmp) };
}

/** A TCP port free a moment ago, for the one benchmark that cannot take port 0. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Benchmark {
  readonly name: string;
  /** Why it cannot run here, or undefined when it can. */
  readonly missing?: string;
  readonly command: (out: string) => Promise<[string, string[], Record<string, string>?]>;
  readonly keys: readonly string[];
  /** The tables its `--docs` run writes, rendered from the quick report: each must have `rows` rows, one per measured item. */
  readonly tables?: readonly { readonly render: (report: unknown) => string; readonly rows: (report: Report) => number }[];
}

/** A benchmark's JSON report: each has a shape of its own, read here only by its `rows`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Report = Record<string, any>;

/** The body rows of the markdown tables in `text` (header and separator lines left out). */
const tableRows = (text: string) => {
  const lines = text.split('\n').filter((line) => line.startsWith('|'));
  return lines.length - 2 * lines.filter((line) => /^\|(-+\|)+$/.test(line)).length;
};

const BENCHMARKS: readonly Benchmark[] = [
  {
    name: 'cold-start',
    missing: has('hyperfine') ? undefined : 'hyperfine is not installed',
    command: async (out) => ['bash', ['bin/bench/cold-start.sh', '--quick', '--out', out], { BENCH_PORT: String(await freePort()) }],
    keys: ['cores', 'node', 'date', 'runs', 'results', 'memory'],
    // A row per scenario, then one per memory measure (after a first start, after a restart).
    tables: [{ render: renderColdStartSection, rows: (report) => report.results.length + 2 }],
  },
  {
    name: 'load',
    command: async (out) => [process.execPath, ['bin/bench/load.mjs', '--quick', '--out', out]],
    keys: ['cores', 'node', 'date', 'seconds_per_run', 'runs_per_row', 'runs', 'ratios', 'ping', 'total_s'],
    // A row per scenario and concurrency, then one per concurrency for the ratios.
    tables: [{ render: renderLoadSection, rows: (report) => report.runs.length + report.ratios.length }],
  },
  {
    name: 'hot-paths',
    command: async (out) => [TSX, ['bin/bench/hot-paths.ts', '--quick', '--out', out]],
    keys: ['date', 'node', 'cores', 'seed', 'runs', 'import_500_ms_per_record', 'import_5000', 'get_guidance_p50_ms', 'load_average_1m'],
    tables: [{ render: renderHotPaths, rows: () => 3 }],
  },
  {
    name: 'search-baseline',
    command: async (out) => [TSX, ['bin/bench/search-baseline.ts', '--quick', '--baseline', '.', '--json', out, '--cache-dir', join(out, '..', 'eval-cache')]],
    keys: ['date', 'node', 'cores', 'baseline', 'commit', 'baseline_commit', 'questions', 'runs', 'summary'],
    // Two cache modes, each question new and then again.
    tables: [{ render: renderSearchBaseline, rows: () => 4 }],
  },
  {
    name: 'verify',
    missing: has('openssl') ? undefined : 'openssl is not installed',
    command: async (out) => [TSX, ['bin/bench/verify.ts', '--quick', '--out', out]],
    keys: ['date', 'node', 'cores', 'sources', 'hosts', 'runs', 'median_seconds', 'checks_per_second', 'verified'],
    tables: [{ render: renderVerify, rows: () => 1 }],
  },
  {
    name: 'local-search',
    missing: existsSync(join(SCIFACT, 'corpus.jsonl')) ? undefined : 'the SciFact dataset is not at ../shared/eval/scifact',
    command: async (out) => [TSX, ['bin/bench/local-search.ts', '--quick', '--dataset', SCIFACT, '--cache-dir', join(out, '..', 'eval-cache'), '--out', out]],
    keys: ['date', 'node', 'cores', 'first_search', 'http'],
    tables: [
      // A row per restart and the medians' row.
      { render: renderLocalSearchRestarts, rows: (report) => report.first_search.restarts + 1 },
      // A row per kind of search (the quick run makes none over HTTP).
      { render: renderLocalSearchHttp, rows: (report) => report.http[0]?.length ?? 0 },
    ],
  },
  {
    name: 'collections',
    command: async (out) => [TSX, ['bin/bench/collections.ts', '--quick', '--out', out, '--cache-dir', join(out, '..', 'eval-cache')]],
    keys: ['date', 'node', 'cores', 'internal_records', 'questions', 'rounds', 'runs', 'summary', 'guest_answers', 'dense_check', 'plans', 'each_run'],
    // One row: the medians over runs, each run's ratio in it.
    tables: [{ render: renderCollections, rows: () => 1 }],
  },
  {
    name: 'vector-plan',
    command: async (out) => [TSX, ['bin/bench/vector-plan.ts', '--quick', '--out', out]],
    keys: ['date', 'node', 'cores', 'runs', 'passages_asked', 'queries', 'sizes'],
    tables: [{ render: renderVectorPlan, rows: (report) => report.sizes.length }],
  },
  {
    name: 'search-bundle',
    command: async (out) => [TSX, ['bin/bench/search-bundle.ts', '--quick', '--out', out]],
    keys: ['date', 'node', 'cores', 'runs', 'inline', 'split', 'load_average'],
    tables: [{ render: renderSearchBundle, rows: () => 2 }],
  },
  {
    name: 'cli-start',
    command: async (out) => [process.execPath, ['bin/bench/cli-start.mjs', '--quick', '--out', out]],
    keys: ['date', 'node', 'cores', 'command', 'runs', 'median_ms', 'load_average_1m'],
    tables: [{ render: renderCliStart, rows: () => 1 }],
  },
  {
    name: 'keyword-scale',
    command: async (out) => [TSX, ['bin/bench/keyword-scale.ts', '--quick', '--out', out]],
    keys: ['date', 'node', 'cores', 'source', 'pool', 'rounds', 'sizes', 'summary'],
    tables: [{ render: renderKeywordScaleSection, rows: (report) => report.sizes.length }],
  },
];

describe.concurrent('every benchmark runs in its quick mode', () => {
  for (const bench of BENCHMARKS) {
    it.skipIf(bench.missing !== undefined)(`${bench.name}${bench.missing ? ` (skipped: ${bench.missing})` : ''} exits 0 and writes its report`, async ({ expect }) => {
      const out = join(root, bench.name, `${bench.name}.json`);
      const [command, args, env] = await bench.command(out);
      const run = await slot(() => runBenchmark(command, args, env));
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(await readFile(out, 'utf8')) as Report;
      expect(Object.keys(report)).toEqual(expect.arrayContaining([...bench.keys]));
      expect(run.leftovers).toEqual([]);
      for (const table of bench.tables ?? []) {
        const shown = table.render(report);
        expect(shown).toContain(String(report.date).slice(0, 10));
        expect(tableRows(shown), shown).toBe(table.rows(report));
      }
    }, 600_000);
  }
});

describe('a benchmark that fails', () => {
  it('exits non-zero on an option it cannot use, before it creates anything', async () => {
    const run = await runBenchmark(process.execPath, ['bin/bench/load.mjs', '--seconds', 'soon']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--seconds');
    expect(run.leftovers).toEqual([]);
  });

  it('refuses --docs with --quick (a quick run measures nothing to record), before it creates anything', async () => {
    const run = await runBenchmark(process.execPath, ['bin/bench/cli-start.mjs', '--quick', '--docs']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--docs');
    expect(run.leftovers).toEqual([]);
  });

  it('exits non-zero when its server cannot start, and removes its data directory', async () => {
    // An address no name resolves to: the server it starts exits, after the data directory exists.
    const run = await runBenchmark(process.execPath, ['bin/bench/load.mjs', '--quick', '--out', join(root, 'never.json')], { HOST: '256.1.1.1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('bench:load failed');
    expect(run.leftovers).toEqual([]);
    expect(existsSync(join(root, 'never.json'))).toBe(false);
  }, 120_000);

  it('removes its data directory on SIGINT', async () => {
    const run = await runBenchmark(process.execPath, ['bin/bench/load.mjs', '--quick', '--out', join(root, 'interrupted.json')], {}, (pid, tmp) => {
      // Interrupt once its server has made the data directory, as someone pressing Ctrl-C mid-run would.
      const poll = setInterval(() => {
        void leftovers(tmp).then((found) => {
          if (found.length === 0 || !existsSync(join(tmp, found[0]!, 'data'))) return;
          clearInterval(poll);
          process.kill(pid, 'SIGINT');
        });
      }, 50);
      return () => clearInterval(poll);
    });
    expect(run.code).not.toBe(0);
    expect(run.leftovers).toEqual([]);
  }, 120_000);
});
