/**
 * The report of `bench:load` (`load.mjs`): medians over runs, the ratios measured
 * inside each run, and the section of docs/testing.md rendered from the report's
 * JSON. `load.mjs --docs` writes both the JSON (docs/bench/load.json) and the
 * section; `test/architecture/bench-tables.test.ts` renders the committed JSON again
 * and fails when the section differs, so the figures in the docs are always the ones
 * a run wrote, with its date and load average. Plain JavaScript, so `load.mjs` runs
 * it without a loader.
 */

export const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

const round = (value, digits = 1) => (value === null || value === undefined || !Number.isFinite(value) ? null : Number(value.toFixed(digits)));

/** One row per scenario and concurrency: the median of each figure over the runs, and each run's req/s. */
export function aggregateRows(runs) {
  const rows = [];
  for (const first of runs[0]) {
    const same = runs.map((run) => run.find((r) => r.key === first.key && r.connections === first.connections)).filter(Boolean);
    const pick = (field) => median(same.map((r) => r[field]));
    rows.push({
      scenario: first.scenario,
      key: first.key,
      connections: first.connections,
      requests_per_s: round(pick('requests_per_s'), 0),
      p50_ms: round(pick('p50_ms')),
      p95_ms: round(pick('p95_ms')),
      p99_ms: round(pick('p99_ms')),
      cpu_ms_per_request: round(pick('cpu_ms_per_request'), 2),
      main_thread_cpu_ms_per_request: round(pick('main_thread_cpu_ms_per_request'), 2),
      answer_cache_hits: same.map((r) => r.answer_cache_hits).join(', '),
      encoder_runs: same.map((r) => r.encoder_runs).join(', '),
      load_average_1m: round(pick('load_average_1m'), 2),
      requests_per_s_each_run: same.map((r) => r.requests_per_s),
    });
  }
  return rows;
}

/**
 * The computed answer against the two paths that do not compute one, measured in the
 * same run (so a busy machine slows both sides): per concurrency, the median over the
 * runs of each run's ratio.
 */
export function aggregateRatios(runs) {
  const concurrencies = [...new Set(runs[0].map((r) => r.connections))];
  return concurrencies.map((connections) => {
    const each = runs.map((run) => {
      const of = (key) => run.find((r) => r.key === key && r.connections === connections);
      const known = of('known');
      const hit = of('hit');
      const ping = of('ping');
      if (!known || !hit || !ping) return undefined;
      return {
        p50_over_ping: known.p50_ms / ping.p50_ms,
        p50_over_cached: known.p50_ms / hit.p50_ms,
        cpu_over_ping: known.cpu_ms_per_request / ping.cpu_ms_per_request,
        cpu_over_cached: known.cpu_ms_per_request / hit.cpu_ms_per_request,
      };
    }).filter(Boolean);
    const pick = (field) => round(median(each.map((e) => e[field])), 2);
    return { connections, known_p50_over_ping: pick('p50_over_ping'), known_p50_over_cached: pick('p50_over_cached'), known_cpu_over_ping: pick('cpu_over_ping'), known_cpu_over_cached: pick('cpu_over_cached') };
  });
}

const cell = (value) => (value === null || value === undefined ? '–' : String(value));

/** The markdown of docs/testing.md's load section, from a report `load.mjs` wrote. */
export function renderLoadSection(report) {
  const lines = [
    `Measured ${report.date.slice(0, 10)} on ${report.cores} cores, Node ${report.node}, ${report.runs_per_row} runs of ${report.seconds_per_run} s per row (medians; the load average is the median of the row's runs).`,
    '',
    '| scenario | clients | req/s | p50 ms | p95 ms | p99 ms | CPU ms per request (main thread) | answers from cache | encoder runs | load avg | req/s of each run |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of report.runs) {
    const cpu = r.cpu_ms_per_request === null ? '–' : `${r.cpu_ms_per_request} (${cell(r.main_thread_cpu_ms_per_request)})`;
    lines.push(`| ${r.scenario} | ${r.connections} | ${cell(r.requests_per_s)} | ${cell(r.p50_ms)} | ${cell(r.p95_ms)} | ${cell(r.p99_ms)} | ${cpu} | ${r.answer_cache_hits} | ${r.encoder_runs} | ${cell(r.load_average_1m)} | ${r.requests_per_s_each_run.join(', ')} |`);
  }
  lines.push('', 'The computed answer (known questions, answer not cached) against ping and the cached answer, each ratio taken within one run:', '');
  lines.push('| clients | p50 / ping p50 | p50 / cached p50 | CPU / ping CPU | CPU / cached CPU |', '|---|---|---|---|---|');
  for (const r of report.ratios) lines.push(`| ${r.connections} | ${cell(r.known_p50_over_ping)} | ${cell(r.known_p50_over_cached)} | ${cell(r.known_cpu_over_ping)} | ${cell(r.known_cpu_over_cached)} |`);
  const p = report.ping;
  lines.push('', `${p.scenario}: p50 ${cell(p.p50_ms)} ms, p95 ${cell(p.p95_ms)} ms, p99 ${cell(p.p99_ms)} ms, max ${cell(p.max_ms)} ms (medians of ${p.runs} runs; ${p.pings_each_run.join(', ')} pings; p99 of each run ${p.p99_ms_each_run.join(', ')} ms; load average ${cell(p.load_average_1m)}).`);
  return lines.join('\n');
}

/** `doc` with the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` replaced by `body`. */
export function replaceSection(doc, name, body) {
  const pattern = new RegExp(`(<!-- ${name}:begin -->\\n)[\\s\\S]*?(\\n<!-- ${name}:end -->)`);
  if (!pattern.test(doc)) throw new Error(`no ${name}:begin/end markers`);
  return doc.replace(pattern, (_all, begin, end) => begin + body + end);
}

/** The text between the markers, or undefined. */
export function section(doc, name) {
  return new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(doc)?.[1];
}
