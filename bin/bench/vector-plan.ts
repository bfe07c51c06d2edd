/**
 * `npm run bench:vector-plan -- [--sizes 500,1000,3000,5000] [--queries 40] [--exact-passages N] [--runs 3] [--out FILE] [--quick] [--docs [--docs-name NAME]]`
 *
 * How fast the dense side finds its nearest passages on a store as it grows, and
 * whether `chatctx_vector_search` takes the faster way at each size. One in-memory
 * store grows through `--sizes` records (3.33 passages each, vectors near the starter
 * corpus's shipped ones: `passage-store.ts`), its HNSW index built again after each
 * step as after a server's large import. At each size the same `--queries` query vectors are timed, each way in
 * turn, for a caller who sees the whole store (the answer of a one-collection store):
 *
 * - `exact`: every passage compared, the 40 nearest kept (what 012 ran up to 3,000
 *   visible passages);
 * - `index_ef40`, `index_ef100`: the HNSW index, with hnsw.ef_search 40 and 100;
 * - `before`: the function as schema/012_collections.sql defined it, loaded under
 *   another name, and `after`: the function as the store now defines it (013).
 *
 * Beside the times, how many of the exact 40 nearest passages each index read found
 * (recall), and which way `after` went (counted in pg_stat_user_indexes). The whole
 * growth is run `--runs` times (3), each time in a new store from the same seed, with the
 * same queries; the table gives the medians over runs and each run's 013 / 012 ratio.
 * Prints the table and writes JSON (by default to the git-ignored
 * `bench-results/vector-plan.json`) with the load average before and after each size.
 * `--docs` also writes docs/bench/vector-plan.json and docs/testing.md's sizes table
 * from it; the small-stores table there is the run with
 * `--sizes 30,45,60,75,90,150 --exact-passages 0 --docs --docs-name vector-plan-small`.
 * `--quick` (the benchmark test): sizes 60 and 200, 3 queries, one run.
 */
import { Command } from 'commander';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { vectorLiteral } from '../../lambdas/embeddings/vector-codec.ts';
import { percentile } from '../eval/metrics.ts';
import { addPassageRecords, queryVector, passageSource } from './passage-store.ts';
import { machine, recordInDocs, renderVectorPlan } from './docs-report.mjs';

const opts = new Command('bench:vector-plan')
  .option('--sizes <list>', 'store sizes in records, ascending', '500,1000,3000,5000')
  .option('--queries <n>', 'query vectors timed at each size', (v) => Number(v), 40)
  .option('--exact-passages <n>', "sets chatctx.exact_passages for the run (the size up to which the function scans exactly; 0: the index at every size)")
  .option('--runs <n>', 'runs of the whole growth, each in a new store (medians reported)', (v) => Number(v), 3)
  .option('--out <file>', 'where the JSON report goes', 'bench-results/vector-plan.json')
  .option('--quick', 'sizes 60 and 200, 3 queries, one run: checks that the benchmark runs')
  .option('--docs', 'also write docs/bench/<docs name>.json and its table in docs/testing.md')
  .option('--docs-name <name>', 'which of the two tables --docs writes: vector-plan (the sizes) or vector-plan-small (the small stores)', 'vector-plan')
  .parse()
  .opts<{ sizes: string; queries: number; exactPassages?: string; runs: number; out: string; quick?: boolean; docs?: boolean; docsName: string }>();
if (opts.quick) Object.assign(opts, { sizes: '60,200', queries: 3, runs: 1 });
const sizes = opts.sizes.split(',').map(Number);
const badExact = opts.exactPassages !== undefined && !/^[0-9]{1,7}$/.test(opts.exactPassages);
if (!sizes.every((n, i) => Number.isInteger(n) && n >= 1 && (i === 0 || n > sizes[i - 1]!)) || ![opts.queries, opts.runs].every((n) => Number.isInteger(n) && n >= 1) || badExact) {
  console.error(
    `bench:vector-plan: --sizes takes ascending positive whole numbers, --queries, --runs and --exact-passages whole numbers (got ${opts.sizes}, ${opts.queries}, ${opts.runs}, ${opts.exactPassages})`,
  );
  process.exit(2);
}
if (opts.docs && (opts.quick || !['vector-plan', 'vector-plan-small'].includes(opts.docsName))) {
  console.error(`bench:vector-plan: --docs records a full run (not with --quick) under --docs-name vector-plan or vector-plan-small (got ${opts.docsName})`);
  process.exit(2);
}

/** What the hybrid search asks of the dense side (candidate-search.ts: 40 passages, pooled into at most 50 records). */
const PASSAGES = 40;
const POOL = 50;
const WAYS = ['exact', 'index_ef40', 'index_ef100', 'before', 'after'] as const;
type Way = (typeof WAYS)[number];

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const median = (values: readonly number[]) => percentile(values, 50);
const progress = (what: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${what}\n`);

/** 012's collections overload, under the name `chatctx_vector_search_012`, so both versions run in one process. */
async function loadPreviousFunction(sql: PgliteSql): Promise<void> {
  const text = await readFile(resolve('schema/012_collections.sql'), 'utf8');
  const start = text.indexOf('CREATE OR REPLACE FUNCTION chatctx_vector_search(p_vector vector, p_technologies jsonb, p_collections');
  const end = text.indexOf('$fn$;', start);
  if (start < 0 || end < 0) throw new Error('the vector function of schema/012_collections.sql was not found');
  await sql.query(text.slice(start, end + '$fn$;'.length).replace('FUNCTION chatctx_vector_search(', 'FUNCTION chatctx_vector_search_012('));
}

/** The nearest passages' record ids one way; the index ways in a transaction of their own settings, as the function sets them. */
async function nearestBy(sql: PgliteSql, way: Way, query: string): Promise<string[]> {
  if (way === 'before' || way === 'after') {
    const name = way === 'before' ? 'chatctx_vector_search_012' : 'chatctx_vector_search';
    return (await sql.query<{ id: string }>(`SELECT id FROM ${name}($1::vector, NULL, '{1}'::int[], $2, $3)`, [query, PASSAGES, POOL])).map((r) => r.id);
  }
  const statement = 'SELECT p.record_id::text AS id FROM record_passages p WHERE p.collection_id = 1 ORDER BY p.embedding <=> $1::vector, p.record_id LIMIT $2';
  if (way === 'exact') {
    return sql.transaction(async (tx) => {
      await tx.query("SELECT set_config('enable_indexscan', 'off', true)");
      return (await tx.query<{ id: string }>(statement, [query, PASSAGES])).map((r) => r.id);
    });
  }
  return sql.transaction(async (tx) => {
    await tx.query("SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('enable_sort', 'off', true)", [
      way === 'index_ef40' ? '40' : '100',
    ]);
    return (await tx.query<{ id: string }>(statement.replace(', p.record_id LIMIT', ' LIMIT'), [query, PASSAGES])).map((r) => r.id);
  });
}

/** Scans of either vector index so far: a caller of the public collection alone reads the public collection's own (013), whose counter the store's index does not move. */
async function hnswScans(sql: PgliteSql): Promise<number> {
  await sql.query('SELECT pg_stat_force_next_flush()');
  await sql.query('SELECT pg_stat_clear_snapshot()');
  const [row] = await sql.query<{ n: number }>(
    "SELECT sum(idx_scan)::int AS n FROM pg_stat_user_indexes WHERE indexrelname IN ('record_passages_embedding_idx', 'record_passages_public_embedding_idx')",
  );
  return Number(row!.n);
}

/** One size: every query every way, the ways in a rotating order so none always goes first. */
async function measure(sql: PgliteSql, queries: readonly string[]) {
  const times = Object.fromEntries(WAYS.map((w) => [w, [] as number[]])) as Record<Way, number[]>;
  const found = { index_ef40: 0, index_ef100: 0 };
  let wanted = 0;
  for (const [i, query] of queries.entries()) {
    const order = WAYS.map((_, k) => WAYS[(i + k) % WAYS.length]!);
    const results = {} as Record<Way, string[]>;
    for (const way of order) {
      const started = performance.now();
      results[way] = await nearestBy(sql, way, query);
      times[way].push(performance.now() - started);
    }
    // Passage rows as multisets of record ids: how many of the exact nearest each index read returned.
    for (const way of ['index_ef40', 'index_ef100'] as const) {
      const left = [...results.exact];
      for (const id of results[way]) {
        const at = left.indexOf(id);
        if (at >= 0) {
          left.splice(at, 1);
          found[way] += 1;
        }
      }
    }
    wanted += results.exact.length;
  }
  // Which way the function went: one more call, between two reads of the index's scan counter.
  const scansBefore = await hnswScans(sql);
  await nearestBy(sql, 'after', queries[0]!);
  const afterUsedIndex = (await hnswScans(sql)) > scansBefore;
  return {
    p50_ms: Object.fromEntries(WAYS.map((w) => [w, round(median(times[w]), 2)])),
    recall: { index_ef40: round(found.index_ef40 / wanted, 3), index_ef100: round(found.index_ef100 / wanted, 3) },
    after_over_before: round(median(times.after) / median(times.before), 2),
    after_used_index: afterUsedIndex,
  };
}

type Measured = Awaited<ReturnType<typeof measure>>;
interface SizeRun {
  readonly records: number;
  readonly passages: number;
  readonly load: number[];
  readonly load_after: number[];
  readonly result: Measured;
}

/** One run: a new store from the seed, grown through every size, the same queries timed at each. */
async function oneRun(run: number): Promise<SizeRun[]> {
  const sql = await PgliteSql.open();
  try {
    await migrate(sql);
    await loadPreviousFunction(sql);
    if (opts.exactPassages !== undefined) await sql.query("SELECT set_config('chatctx.exact_passages', $1, false)", [opts.exactPassages]);
    // The same seed every run: the same queries and the same passages; only the index's graph (and the machine) differ.
    const source = await passageSource(20_261_202);
    const queries = Array.from({ length: opts.queries }, () => vectorLiteral(queryVector(source)));
    const rows: SizeRun[] = [];
    let records = 0;
    for (const size of sizes) {
      progress(`run ${run + 1}/${opts.runs}: growing the store to ${size} records`);
      await addPassageRecords(sql, source, { prefix: 'generated', from: records, to: size, collection: 1 });
      records = size;
      // What a local server does at start (PGlite has no autovacuum): fresh statistics for the planner.
      await sql.query('ANALYZE record_passages');
      const passages = (await sql.query<{ passages: number }>('SELECT count(*)::int AS passages FROM record_passages'))[0]?.passages ?? 0;
      for (const query of queries.slice(0, 3)) for (const way of WAYS) await nearestBy(sql, way, query);
      const load = loadavg().map((l) => round(l, 2));
      progress(`${size} records (${passages} passages): timing ${queries.length} queries each way (load ${load.join(' ')})`);
      rows.push({ records: size, passages, load, result: await measure(sql, queries), load_after: loadavg().map((l) => round(l, 2)) });
    }
    return rows;
  } finally {
    await sql.close();
  }
}

/** Per size: the medians over runs, each run's 013 / 012 ratio, which way 013 went and the load in each run. */
function aggregate(runs: readonly SizeRun[][]) {
  return sizes.map((records, i) => {
    const each = runs.map((run) => run[i]!);
    const mid = (pick: (r: Measured) => number) => median(each.map((r) => pick(r.result)));
    return {
      records,
      passages: median(each.map((r) => r.passages)),
      p50_ms: Object.fromEntries(WAYS.map((w) => [w, round(mid((r) => r.p50_ms[w]!), 2)])),
      recall: { index_ef40: round(mid((r) => r.recall.index_ef40), 3), index_ef100: round(mid((r) => r.recall.index_ef100), 3) },
      after_over_before: round(mid((r) => r.after_over_before), 2),
      after_over_before_each_run: each.map((r) => r.result.after_over_before),
      after_used_index_each_run: each.map((r) => r.result.after_used_index),
      load_average_1m_each_run: each.map((r) => r.load[0]!),
      runs: each,
    };
  });
}

try {
  const report = { ...machine(), quick: opts.quick ?? false, runs: opts.runs, passages_asked: PASSAGES, queries: opts.queries, exact_passages: opts.exactPassages ?? null, sizes: [] as unknown[] };
  const runs: SizeRun[][] = [];
  for (let run = 0; run < opts.runs; run++) runs.push(await oneRun(run));
  report.sizes = aggregate(runs);
  console.log(renderVectorPlan(report));
  await mkdir(dirname(resolve(opts.out)), { recursive: true });
  await writeFile(resolve(opts.out), JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${opts.out}`);
  if (opts.docs) console.log(`wrote ${recordInDocs(opts.docsName, report).join(' and ')}`);
} catch (error) {
  console.error(`bench:vector-plan failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
