/**
 * `npm run bench:hot-paths -- [--runs N] [--out FILE] [--sizes 24,5000,20000] [--calls N] [--quick] [--docs]`
 *
 * Whether the hot paths stay flat as the corpus grows:
 * - the per-record cost of importing 500 generated records (approved, no embedder)
 *   into stores that already hold 24, 5,000 and 20,000 approved records;
 * - importing 5,000 records into an empty store against into a 5,000-record store;
 * - `get_guidance` p50 (slugs and ids) at 24 and at 5,000 records.
 *
 * Records come from a fixed seed, so every run imports the same text. Each store
 * size is built once per run in a data directory and copied for every measurement;
 * the median of `--runs` measurements is reported with the load average, and the
 * report is written as JSON (by default under the git-ignored `.chatctx/`). `--docs`
 * also writes it to docs/bench/hot-paths.json and docs/testing.md's table rendered
 * from it (docs-report.mjs).
 *
 * `--quick` (the benchmark test) shrinks every size: one run, 10 calls, a 50-record
 * batch into 24 records and a bulk import of 24 (two stores to build, not four). It
 * checks that the benchmark runs and writes its report, not what it measures.
 */
import { Command } from 'commander';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import type { RecordFile } from '../../lambdas/records/record-schema.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import { TASK_TYPES, TOPICS } from '../../schema/tools.ts';
import { seededRandom } from './seeded-random.ts';
import { machine, recordInDocs } from './docs-report.mjs';

const opts = new Command('bench:hot-paths')
  .option('--runs <n>', 'measurements per scenario (the median is reported)', '3')
  .option('--calls <n>', 'get_guidance calls per measurement', '200')
  .option('--sizes <list>', 'existing approved records before a 500-record import', '24,5000,20000')
  .option('--out <file>', 'where the JSON report goes', '.chatctx/bench/hot-paths.json')
  .option('--quick', 'tiny sizes, one run: checks that the benchmark runs')
  .option('--docs', "also write docs/bench/hot-paths.json and docs/testing.md's table from it")
  .parse()
  .opts<{ runs: string; calls: string; sizes: string; out: string; quick?: boolean; docs?: boolean }>();

const quick = opts.quick === true;
if (quick && opts.docs) {
  console.error('bench:hot-paths: --docs records a full run; it cannot be combined with --quick');
  process.exit(2);
}
const RUNS = quick ? 1 : Math.max(1, Number(opts.runs));
const CALLS = quick ? 10 : Math.max(1, Number(opts.calls));
const SIZES = (quick ? '24' : opts.sizes).split(',').map(Number);
/** The batch imported into each size, and the bulk import into an empty store and into a store of the same size. */
const BATCH = quick ? 50 : 500;
const BULK = quick ? 24 : 5000;
if (![RUNS, CALLS, ...SIZES].every((n) => Number.isInteger(n) && n >= 0)) {
  console.error(`bench:hot-paths: --runs, --calls and --sizes take whole numbers (got ${opts.runs}, ${opts.calls}, ${opts.sizes})`);
  process.exit(2);
}
const SEED = 20_261_201;


const SYLLABLES = ['ka', 'lo', 'mi', 'ter', 'van', 'sul', 'dre', 'pon', 'qui', 'rast', 'bel', 'nor', 'fex', 'tam', 'gri', 'hol'];
const TECHNOLOGIES = ['Node.js', 'PostgreSQL', 'React', 'TypeScript', 'Python', 'Docker', 'Kubernetes', 'Redis', 'Go', 'Java'];

function vocabulary(random: () => number, size: number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const parts = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length: parts }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
  }
  return [...words];
}

/** `count` valid record files whose slugs start with `prefix`, from `seed`. */
async function generateRecords(count: number, seed: number, prefix: string): Promise<RecordFile[]> {
  const random = seededRandom(seed);
  const words = vocabulary(seededRandom(SEED), 4000);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, () => pick(words)).join(' ') + '.';
  const items = Array.from({ length: count }, (_, i) => ({
    slug: `${prefix}-${i}`,
    title: sentence(6),
    topic: pick(TOPICS),
    task_types: [pick(TASK_TYPES)],
    summary: sentence(18),
    recommendation: sentence(30),
    rationale: sentence(30),
    applies_to: [{ kind: 'runtime', name: pick(TECHNOLOGIES) }],
    pitfalls: [sentence(10), sentence(10)],
    verification_checks: [sentence(10)],
    confidence: 'high',
    sources: [{ title: sentence(4), url: `https://example.org/${prefix}/${i}` }],
  }));
  return validateRecords(items, (i) => `generated ${i}`);
}

/** The 1-minute load average as each measurement ended. */
const loads: number[] = [];

/** Runs `work` `RUNS` times and returns the median of what it measures. */
async function median(work: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    values.push(await work());
    loads.push(Math.round(loadavg()[0]! * 100) / 100);
  }
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

const progress = (what: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${what}\n`);
const root = await mkdtemp(join(tmpdir(), 'chatctx-bench-hot-paths-'));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // An interrupted run leaves no stores behind: they are throwaway copies.
    void rm(root, { recursive: true, force: true }).finally(() => process.exit(130));
  });
}

/** A data directory holding `size` approved generated records. */
async function template(size: number): Promise<string> {
  const dir = join(root, `template-${size}`);
  const sql = await PgliteSql.open(dir);
  await migrate(sql);
  if (size > 0) await importRecords(sql, await generateRecords(size, SEED, 'existing'), { approve: true });
  // Planner statistics, as a server has them: the local server refreshes them after an
  // owner's import (lambdas/local/planner-statistics.ts), Aurora by autovacuum. Without
  // them get_guidance at 5,000 records took 5.6 ms instead of 1.6 (plans chosen blind).
  await sql.query('ANALYZE');
  await sql.query('CHECKPOINT');
  await sql.close();
  progress(`store with ${size} records built`);
  return dir;
}

/** Opens a fresh copy of a template, runs `work` on it, and throws the copy away. */
async function onCopy<T>(dir: string, work: (sql: PgliteSql) => Promise<T>): Promise<T> {
  const copy = await mkdtemp(join(root, 'copy-'));
  await cp(dir, copy, { recursive: true });
  const sql = await PgliteSql.open(copy);
  try {
    return await work(sql);
  } finally {
    await sql.close();
    await rm(copy, { recursive: true, force: true });
  }
}

/** Milliseconds per record of importing `records` (approved) into a copy of `dir`. */
async function importCost(dir: string, records: readonly RecordFile[]): Promise<number> {
  return median(() =>
    onCopy(dir, async (sql) => {
      const started = performance.now();
      await importRecords(sql, records, { approve: true });
      return (performance.now() - started) / records.length;
    }),
  );
}

/** get_guidance p50 (ms) over `CALLS` calls, each naming two slugs, two ids and one unknown identifier. */
async function guidanceP50(dir: string, size: number): Promise<number> {
  return median(() =>
    onCopy(dir, async (sql) => {
      const logger = createLogger(() => undefined);
      const tools = createToolHandlers({ sql, secrets: { pepper: async () => Buffer.alloc(32) }, logger });
      const rows = await sql.query<{ id: string; slug: string }>('SELECT id::text AS id, slug FROM records ORDER BY slug');
      const random = seededRandom(SEED + size);
      const pick = () => rows[Math.floor(random() * rows.length)]!;
      const times: number[] = [];
      for (let i = 0; i <= CALLS; i += 1) {
        const ids = [pick().slug, pick().slug, pick().id, pick().id, `no-such-record-${i}`];
        const started = performance.now();
        await tools.get_guidance({ ids });
        if (i > 0) times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      return times[Math.floor(times.length / 2)]!;
    }),
  );
}

const round = (n: number) => Math.round(n * 1000) / 1000;
const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
const report: Record<string, unknown> = { ...machine(), seed: SEED, runs: RUNS, calls: CALLS, sizes: SIZES, batch: BATCH, bulk: BULK, load_before: loadavg() };
const rows: [string, string][] = [];

try {
  const batch = await generateRecords(BATCH, SEED + 1, 'imported');
  const templates = new Map<number, string>();
  for (const size of [...new Set([0, 24, BULK, ...SIZES])]) templates.set(size, await template(size));
  const perRecord: Record<string, number> = {};
  for (const size of SIZES) {
    perRecord[size] = round(await importCost(templates.get(size)!, batch));
    progress(`${BATCH} into ${size}: ${perRecord[size]} ms/record`);
    rows.push([`import ${BATCH} into ${size} existing (ms/record)`, perRecord[size]!.toFixed(3)]);
  }
  const big = await generateRecords(BULK, SEED + 2, 'bulk');
  const intoEmpty = round(await importCost(templates.get(0)!, big));
  const intoFull = round(await importCost(templates.get(BULK)!, big));
  rows.push([`import ${BULK} into empty (ms/record)`, intoEmpty.toFixed(3)], [`import ${BULK} into ${BULK} (ms/record)`, intoFull.toFixed(3)]);
  rows.push(['  ratio (acceptance <= 2)', (intoFull / intoEmpty).toFixed(2)]);
  const p50Small = round(await guidanceP50(templates.get(24)!, 24));
  const p50Large = round(await guidanceP50(templates.get(BULK)!, BULK));
  rows.push(['get_guidance p50 at 24 records (ms)', p50Small.toFixed(3)], [`get_guidance p50 at ${BULK} records (ms)`, p50Large.toFixed(3)]);
  rows.push(['  ratio (acceptance <= 1.5)', (p50Large / p50Small).toFixed(2)]);
  // The key names keep the full-size figures' names, so earlier reports still compare; `quick` says when they do not hold.
  Object.assign(report, {
    quick,
    import_500_ms_per_record: perRecord,
    import_5000: { into_empty_ms_per_record: intoEmpty, into_5000_ms_per_record: intoFull, ratio: round(intoFull / intoEmpty) },
    get_guidance_p50_ms: { at_24: p50Small, at_5000: p50Large, ratio: round(p50Large / p50Small) },
    load_average_1m: loads,
    load_after: loadavg(),
  });
} finally {
  await rm(root, { recursive: true, force: true });
}

const width = Math.max(...rows.map(([name]) => name.length));
process.stdout.write(`hot paths (median of ${RUNS}; load average now ${load()})\n`);
for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}  ${value}\n`);
const out = resolve(opts.out);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, JSON.stringify(report, null, 2) + '\n');
process.stdout.write(`written to ${opts.out}\n`);
if (opts.docs) process.stdout.write(`written to ${recordInDocs('hot-paths', report).join(' and ')}\n`);
