/**
 * The README's speed table: one row per promise the README makes about speed and
 * memory, each figure read from the report its benchmark's `--docs` run committed under
 * docs/bench/, with that run's date and load average beside it and the target the
 * figure is held to. `node bin/bench/readme-speed.mjs` writes the section between
 * `<!-- bench-readme:begin -->` and `<!-- bench-readme:end -->`;
 * test/architecture/bench-tables.test.ts renders it again from the committed reports
 * and fails when the README differs. Plain JavaScript that imports nothing heavy.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { replaceSection } from './load-report.mjs';
import { loadRange } from './docs-report.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The reports the table reads, by name (docs/bench/<name>.json). */
export const README_REPORTS = ['load', 'cold-start', 'vector-plan', 'keyword-scale', 'hot-paths'];

/** The committed reports, by name; a missing one is left out (its rows say so). */
export function readReports(root = ROOT) {
  const reports = {};
  for (const name of README_REPORTS) {
    const path = join(root, 'docs', 'bench', `${name}.json`);
    if (existsSync(path)) reports[name] = JSON.parse(readFileSync(path, 'utf8'));
  }
  return reports;
}

const day = (report) => report.date.slice(0, 10);
const x = (value) => `${Number(value).toFixed(2)}×`;
const met = (ok) => (ok ? 'met' : '**not met**');

function loadRows(load) {
  if (!load) return [['a computed answer', 'not recorded', '', '', '', '']];
  const row = (key, connections) => load.runs.find((r) => r.key === key && r.connections === connections);
  const known = row('known', 16);
  const ratios = load.ratios.find((r) => r.connections === 16);
  return [
    [
      'a computed answer (known question, answer not kept), 16 clients, starter corpus',
      `${known.requests_per_s} req/s, p99 ${known.p99_ms} ms; ${known.cpu_ms_per_request} ms of CPU each, ${x(ratios.known_cpu_over_ping)} a ping's and ${x(ratios.known_cpu_over_cached)} a kept answer's`,
      '≥ 200 req/s, p99 ≤ 150 ms (idle machine)',
      met(known.requests_per_s >= 200 && known.p99_ms <= 150),
      day(load),
      String(known.load_average_1m),
    ],
    [
      'ping while 500 records are imported',
      `p99 ${load.ping.p99_ms} ms (each run ${load.ping.p99_ms_each_run.join(', ')})`,
      'p99 ≤ 50 ms',
      met(load.ping.p99_ms <= 50),
      day(load),
      String(load.ping.load_average_1m),
    ],
  ];
}

function coldStartRows(cold) {
  if (!cold) return [['a restart', 'not recorded', '', '', '', '']];
  const restart = cold.results.find((r) => r.scenario.startsWith('restart'));
  const m = cold.memory;
  return [
    ['a restart, ready to answer', `${restart.median_s.toFixed(2)} s (median of ${cold.runs})`, '≤ 2 s', met(restart.median_s <= 2), day(cold), String(cold.load_average_1m)],
    ['resident memory with the encoder, after a first start / a restart', `${m.first_start.rss_mib} / ${m.restart.rss_mib} MiB`, '≤ 400 MiB each', met(m.first_start.rss_mib <= 400 && m.restart.rss_mib <= 400), day(cold), String(m.load_average_1m)],
    ['resident memory after a first start, over a restart', x(m.first_over_restart), '≤ 1.20×', met(m.first_over_restart <= 1.2), day(cold), String(m.load_average_1m)],
  ];
}

function vectorRows(plan) {
  if (!plan) return [['nearest passages', 'not recorded', '', '', '', '']];
  const indexed = plan.sizes.every((s) => s.after_used_index_each_run.every(Boolean));
  const faster = plan.sizes.every((s) => s.p50_ms.after <= s.p50_ms.exact);
  const sizes = plan.sizes.map((s) => `${s.records.toLocaleString('en-US')}: ${x(s.after_over_before)}`).join(', ');
  const loads = plan.sizes.flatMap((s) => s.load_average_1m_each_run);
  return [
    [
      'nearest passages: the function over 012\'s, by records',
      `${sizes}; ${indexed ? 'through the HNSW index at every size' : 'not through the index at every size'}, ${faster ? 'faster than an exact scan' : '**slower than an exact scan somewhere**'}`,
      'the index wherever it is faster than a scan',
      met(indexed && faster),
      day(plan),
      loadRange(loads),
    ],
  ];
}

function keywordRows(scale) {
  if (!scale) return [['keyword search as the store grows', 'not recorded', '', '', '', '']];
  const last = scale.summary.growth.at(-1);
  const loads = scale.summary.sizes.flatMap((s) => s.load_average_1m);
  const label = `keyword search, ${last.from.toLocaleString('en-US')} to ${last.to.toLocaleString('en-US')} records (${scale.source})`;
  if (last.resident === undefined) {
    const same = scale.summary.sizes.every((s) => s.same_answers === s.answers);
    return [[label, `p50 grows ${x(last.after)} (012's statement ${x(last.before)}); ${same ? 'the same answers' : '**answers differ**'}`, '≤ 1.50×, the same answers', met(last.after <= 1.5 && same), day(scale), loadRange(loads)]];
  }
  // The local server scores keywords in memory; the AWS stack runs 015's statement.
  const same = scale.summary.sizes.every((s) => s.resident_same_answers === s.answers && s.same_answers === s.answers);
  return [
    [
      label,
      `p50 grows ${x(last.resident)} on the local server (in memory); 015's statement ${x(last.after)}, 012's ${x(last.before)}; ${same ? 'the same answers' : '**answers differ**'}`,
      '≤ 1.50×, the same answers',
      met(last.resident <= 1.5 && same),
      day(scale),
      loadRange(loads),
    ],
  ];
}

function hotPathRows(hot) {
  if (!hot) return [['get_guidance and imports as the store grows', 'not recorded', '', '', '', '']];
  const loads = loadRange(hot.load_average_1m);
  return [
    ['`get_guidance` at 5,000 records over 24', `${x(hot.get_guidance_p50_ms.ratio)} (p50 ${hot.get_guidance_p50_ms.at_5000.toFixed(2)} ms)`, '≤ 1.50×', met(hot.get_guidance_p50_ms.ratio <= 1.5), day(hot), loads],
    ['importing 5,000 records into 5,000 over into an empty store, per record', `${x(hot.import_5000.ratio)} (${hot.import_5000.into_5000_ms_per_record.toFixed(2)} ms a record)`, '≤ 2.00×', met(hot.import_5000.ratio <= 2), day(hot), loads],
  ];
}

/** The README's section: the table and where each figure's full table is. */
export function renderReadmeSpeed(reports) {
  const rows = [...loadRows(reports.load), ...coldStartRows(reports['cold-start']), ...vectorRows(reports['vector-plan']), ...keywordRows(reports['keyword-scale']), ...hotPathRows(reports['hot-paths'])];
  return [
    '| measure | recorded | target | target met | date | load avg (1 min) |',
    '|---|---|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}

/** Writes the README's section from the committed reports. */
export function recordReadmeSpeed(root = ROOT) {
  const path = join(root, 'README.md');
  writeFileSync(path, replaceSection(readFileSync(path, 'utf8'), 'bench-readme', renderReadmeSpeed(readReports(root))));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  recordReadmeSpeed();
  console.log('README.md: speed table written from docs/bench/');
}
