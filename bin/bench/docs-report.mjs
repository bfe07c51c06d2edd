/**
 * The speed tables the benchmarks write into the docs themselves. A benchmark run with
 * `--docs` writes its report to docs/bench/<name>.json and replaces each of its
 * sections (between `<!-- bench-...:begin -->` and `<!-- bench-...:end -->`) with the
 * report rendered here; test/architecture/bench-tables.test.ts renders a committed
 * report again and fails when its section differs, so no figure in the docs can drift
 * from the run that measured it. (`bench:load` and `bench:cold-start` keep their own
 * renderers, load-report.mjs and cold-start-report.mjs.)
 *
 * Every rendered section opens with the date, the machine (cores, Node), how many runs
 * the figures are medians of, and the load average of those runs. Plain JavaScript that
 * imports nothing heavy: the plain-Node benchmarks and the tests import it too.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, replaceSection } from './load-report.mjs';
import { renderKeywordScaleSection } from './keyword-scale-report.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** When and on what a report was measured: the first fields of every report. */
export function machine() {
  return { date: new Date().toISOString(), node: process.version, cores: cpus().length };
}

const measured = (report) => `Measured ${report.date.slice(0, 10)} on ${report.cores} cores, Node ${report.node}`;
const runsOf = (n, what = 'run') => `${n} ${what}${n === 1 ? '' : 's'}`;
/** A whole number as the docs write it: 5000 → "5,000". */
export const thousands = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const ratio = (value) => `${fixed(value, 2)}×`;

/** The load averages of a set of runs, as "1.13" or "1.13–3.62". */
export function loadRange(values) {
  const known = values.filter((v) => Number.isFinite(v));
  if (known.length === 0) return '–';
  const low = Math.min(...known).toFixed(2);
  const high = Math.max(...known).toFixed(2);
  return low === high ? low : `${low}–${high}`;
}

const table = (header, rows) => [`| ${header.join(' | ')} |`, `|${header.map(() => '---|').join('')}`, ...rows.map((cells) => `| ${cells.join(' | ')} |`)];

/** `bench:hot-paths` (docs/testing.md). */
export function renderHotPaths(report) {
  const columns = [...new Set([24, ...report.sizes, report.bulk])].sort((a, b) => a - b);
  const ms = (value) => `${fixed(value, 2)} ms`;
  const row = (label, cells) => [label, ...columns.map((size) => cells.get(size) ?? '–')];
  const guidance = report.get_guidance_p50_ms;
  const bulk = report.import_5000;
  return [
    `${measured(report)}, median of ${runsOf(report.runs)} (seed ${report.seed}, ${report.calls} \`get_guidance\` calls a run; load average ${loadRange(report.load_average_1m)}):`,
    '',
    ...table(
      ['measure', ...columns.map((size, i) => `at ${thousands(size)}${i === 0 ? ' records' : ''}`)],
      [
        row('`get_guidance` p50', new Map([[24, ms(guidance.at_24)], [report.bulk, `${ms(guidance.at_5000)} (${ratio(guidance.ratio)})`]])),
        row(`import of ${thousands(report.batch)} records, per record`, new Map(report.sizes.map((size) => [size, ms(report.import_500_ms_per_record[size])]))),
        row(
          `import of ${thousands(report.bulk)} records, per record`,
          new Map([[columns[0], `${ms(bulk.into_empty_ms_per_record)} (into an empty store)`], [report.bulk, `${ms(bulk.into_5000_ms_per_record)} (${ratio(bulk.ratio)})`]]),
        ),
      ],
    ),
  ].join('\n');
}

/** `bench:vector-plan` (docs/testing.md), for either of its runs: the sizes, and the small stores. */
export function renderVectorPlan(report) {
  const exact = report.exact_passages;
  const setting = exact === null ? '' : ` (\`chatctx.exact_passages\` ${exact}${Number(exact) === 0 ? ': the function reads the index at every size' : ''})`;
  const read = (used) => {
    const n = used.filter(Boolean).length;
    return n === used.length ? 'index' : n === 0 ? 'exact scan' : `index in ${n} of ${used.length} runs`;
  };
  const rows = report.sizes.map((s) => [
    thousands(s.records),
    thousands(s.passages),
    ...['exact', 'index_ef40', 'index_ef100', 'before', 'after'].map((way) => fixed(s.p50_ms[way], 1)),
    `**${ratio(s.after_over_before)}** (${s.after_over_before_each_run.map((r) => fixed(r, 2)).join(', ')})`,
    read(s.after_used_index_each_run),
    `${fixed(s.recall.index_ef40, 3)} / ${fixed(s.recall.index_ef100, 3)}`,
    loadRange(s.load_average_1m_each_run),
  ]);
  return [
    `${measured(report)}: ${report.queries} query vectors at each size, each way in turn, the ${report.passages_asked} nearest passages asked for${setting}; median of ${runsOf(report.runs)}, ms:`,
    '',
    ...table(['records', 'passages', 'exact scan', 'index, ef 40', 'index, ef 100', '012 function', '013 function', '013 / 012 (each run)', '013 read', 'recall ef 40 / ef 100', 'load avg'], rows),
  ].join('\n');
}

/** `bench:verify` (docs/testing.md). */
export function renderVerify(report) {
  return [
    `${measured(report)}, median of ${runsOf(report.runs.length)} (1-minute load average after each: ${report.runs.map((r) => fixed(r.load1, 2)).join(', ')}):`,
    '',
    ...table(
      ['sources', 'hosts', 'page delay', 'median', 'slowest', 'checks/s', 'verified', 'load at the end (1/5/15 min)'],
      [[report.sources, report.hosts, `${report.delay_ms} ms`, `${report.median_seconds} s`, `${report.slowest_seconds} s`, report.checks_per_second, report.verified, report.load_average.join(' / ')]],
    ),
  ].join('\n');
}

const commit = (hash) => (hash ? `\`${hash.slice(0, 7)}\`` : 'an unknown commit');

/** `bench:search-baseline` (docs/testing.md): this checkout's commit against the baseline's. */
export function renderSearchBaseline(report) {
  const changed = (dirty) => (dirty ? ', with uncommitted changes' : '');
  const cache = { server: "the server's (answers not reused)", none: 'none' };
  const rows = report.summary.map((s) => [
    cache[s.cache],
    s.pass === 'miss' ? 'not cached: the encoder runs' : 'cached',
    ...[s.current_p50, s.current_p95, s.baseline_p50, s.baseline_p95].map((v) => fixed(v, 1)),
    `${ratio(s.ratio_p50)} (${s.ratios.map((r) => fixed(r, 2)).join(', ')})`,
    loadRange(s.loads),
  ]);
  return [
    `${measured(report)}: now is ${commit(report.commit)}${changed(report.dirty)}, before is ${commit(report.baseline_commit)}${changed(report.baseline_dirty)}; ${report.questions} questions, ${runsOf(report.runs)}, medians:`,
    '',
    ...table(['search cache', 'query embedding', 'now p50 ms', 'p95 ms', 'before p50 ms', 'p95 ms', 'ratio of p50s (each run)', 'load avg'], rows),
  ].join('\n');
}

/** `bench:collections` (docs/testing.md): store A (public and internal) against B (public alone), median over runs. */
export function renderCollections(report) {
  const s = report.summary;
  const dense = report.dense_check;
  // One figure when every run gave it, else each run's.
  const eachRun = (values) => (new Set(values).size === 1 ? String(values[0]) : values.join(', '));
  const pick = (field) => fixed(median(dense.map((d) => d[field])), 3);
  return [
    `${measured(report)}: ${report.internal_records} internal records beside the starter corpus on A, ${report.questions} questions × ${report.rounds} rounds a run, median of ${runsOf(report.runs)} (the ratios compare A and B within each round, asked in turn):`,
    '',
    ...table(
      ['', 'guest on A p50 ms', 'p95 ms', 'guest on B p50 ms', 'p95 ms', 'A / B p50 (median of rounds)', 'each run', 'internal caller on A p50 ms', '/ B', 'guest answers the same on A and B', 'load avg (1 min)'],
      [
        [
          `median of ${runsOf(report.runs)}`,
          ...[s.guest_a_p50_ms, s.guest_a_p95_ms, s.guest_b_p50_ms, s.guest_b_p95_ms].map((v) => fixed(v, 1)),
          `**${ratio(s.ratio_p50)}**`,
          s.ratio_p50_each_run.map((r) => fixed(r, 2)).join(', '),
          fixed(s.internal_p50_ms, 1),
          ratio(s.internal_ratio_p50),
          `${eachRun(report.guest_answers.map((g) => g.identical))} of ${report.questions}`,
          loadRange(s.load_average_1m_each_round),
        ],
      ],
    ),
    '',
    `The guest's dense side alone (median of the runs): ${pick('recall_a')} of the exact nearest records found on A, ${pick('recall_b')} on B; the exact nearest records were the same on A and B for ${eachRun(dense.map((d) => d.exact_same_on_a_and_b))} of ${report.questions} questions.`,
  ].join('\n');
}

/** `search-bundle.ts` (docs/aws.md): the tokenizer inlined in the search bundle against beside it. */
export function renderSearchBundle(report) {
  return [
    `${measured(report)}, median of ${runsOf(report.runs, 'fresh-process import')} of each bundle, in turn (load average ${loadRange([report.load_average_start, report.load_average])}):`,
    '',
    ...table(
      ['tokenizer', 'bundle', 'load at cold start', 'tokenizer at first use'],
      [
        ['inlined in the bundle', `${report.inline.bundle_kib} KiB`, `${report.inline.load_ms} ms`, '(included)'],
        ['beside the bundle (deployed)', `${report.split.bundle_kib} KiB + ${report.split.tokenizer_kib} KiB`, `${report.split.load_ms} ms`, `${report.split.first_use_ms} ms`],
      ],
    ),
  ].join('\n');
}

/** `local-search.ts` (docs/quality.md): `search_knowledge` over HTTP, query embedding not cached and cached. */
export function renderLocalSearchHttp(report) {
  const kinds = report.http[0] ?? [];
  const rows = kinds.map((first, i) => {
    const each = report.http.map((run) => run[i]);
    const mid = (field) => fixed(median(each.map((r) => r[field])), 1);
    return [first.embedding, first.searches, [...new Set(each.map((r) => r.served_as))].join('; '), mid('p50_ms'), mid('p95_ms'), loadRange(each.map((r) => r.load_average_1m)), each.map((r) => r.p50_ms).join(', ')];
  });
  return [
    `${measured(report)}: the SciFact store (${thousands(report.first_search.records)} records), ${runsOf(report.http.length)} of ${kinds[0]?.searches ?? 0} new questions each, then the same questions again after a restart (no answer kept); medians:`,
    '',
    ...table(['query embedding', 'searches per run', 'served as (each run)', 'p50 ms', 'p95 ms', 'load avg (1 min)', 'p50 of each run'], rows),
  ].join('\n');
}

/** `local-search.ts` (docs/quality.md): the first search after each restart against the ones after it. */
export function renderLocalSearchRestarts(report) {
  const f = report.first_search;
  const seconds = (ms) => `${fixed(ms / 1000, 1)} s`;
  const rows = f.rows.map((r) => [r.restart, seconds(r.ready_ms), `${r.first_ms} ms`, `${r.median_rest_ms} ms`, `${fixed(r.ratio, 1)}×`, loadRange([r.load_average_1m])]);
  rows.push([`median of ${f.restarts}`, seconds(f.median_ready_ms), `${f.median_first_ms} ms`, `${f.median_rest_ms} ms`, `${fixed(f.median_ratio, 1)}×`, loadRange(f.rows.map((r) => r.load_average_1m))]);
  return [
    `${measured(report)}: the SciFact store (${thousands(f.records)} records), ${runsOf(f.restarts, 'restart')}, ${f.searches_per_restart} new questions one at a time after each:`,
    '',
    ...table(['restart', 'ready after', 'first search', `next ${f.searches_per_restart - 1} searches (median)`, 'first ÷ next', 'load avg (1 min)'], rows),
  ].join('\n');
}

/** `cli-start.mjs` (docs/owners.md): a command that needs no server, as a fresh process. */
export function renderCliStart(report) {
  return [
    `${measured(report)}: \`${report.command}\` with no server, on a data directory that already holds a store, median of ${runsOf(report.runs)}, each a fresh process (load average ${fixed(report.load_average_1m, 2)}):`,
    '',
    ...table(['command', 'median', 'min', 'max'], [[`\`${report.command}\``, `${report.median_ms} ms`, `${report.min_ms} ms`, `${report.max_ms} ms`]]),
  ].join('\n');
}

/** Each report a `--docs` run writes (docs/bench/<name>.json), the doc it goes into and the sections rendered from it. */
export const RECORDED = {
  'hot-paths': { doc: 'docs/testing.md', sections: { 'bench-hot-paths': renderHotPaths } },
  'vector-plan': { doc: 'docs/testing.md', sections: { 'bench-vector-plan': renderVectorPlan } },
  'vector-plan-small': { doc: 'docs/testing.md', sections: { 'bench-vector-plan-small': renderVectorPlan } },
  verify: { doc: 'docs/testing.md', sections: { 'bench-verify': renderVerify } },
  'search-baseline': { doc: 'docs/testing.md', sections: { 'bench-search-baseline': renderSearchBaseline } },
  collections: { doc: 'docs/testing.md', sections: { 'bench-collections': renderCollections } },
  'search-bundle': { doc: 'docs/aws.md', sections: { 'bench-search-bundle': renderSearchBundle } },
  'local-search': { doc: 'docs/quality.md', sections: { 'bench-local-search-http': renderLocalSearchHttp, 'bench-local-search-restarts': renderLocalSearchRestarts } },
  'cli-start': { doc: 'docs/owners.md', sections: { 'bench-cli-start': renderCliStart } },
  'keyword-scale': { doc: 'docs/testing.md', sections: { 'bench-keyword-scale': renderKeywordScaleSection } },
};

/** `--docs`: the report as docs/bench/<name>.json and its sections rendered into its doc (rendered first, so a failure writes neither). */
export function recordInDocs(name, report) {
  const entry = RECORDED[name];
  if (!entry) throw new Error(`no docs section records a report named ${name}`);
  if (report.quick) throw new Error('a quick run measures nothing; --docs records a full one');
  const docPath = join(ROOT, entry.doc);
  let doc = readFileSync(docPath, 'utf8');
  for (const [section, render] of Object.entries(entry.sections)) doc = replaceSection(doc, section, render(report));
  mkdirSync(join(ROOT, 'docs', 'bench'), { recursive: true });
  writeFileSync(join(ROOT, 'docs', 'bench', `${name}.json`), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(docPath, doc);
  return [`docs/bench/${name}.json`, entry.doc];
}
