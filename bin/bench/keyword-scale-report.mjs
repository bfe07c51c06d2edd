/**
 * The report of `bench:keyword-scale` (`keyword-scale.ts`): medians over rounds, the
 * growth from one size to the next, and the section of docs/testing.md rendered from
 * the report's JSON (`--docs` writes docs/bench/keyword-scale.json and the section through
 * docs-report.mjs; test/architecture/bench-tables.test.ts checks that the two agree). Plain JavaScript,
 * importable without a loader and without the store.
 */
import { median } from './load-report.mjs';

const round = (value, digits = 2) => Number(value.toFixed(digits));

/** The local server's way, where the report measured it (reports before it did not). */
function residentOf(rounds, pick) {
  if (!rounds.every((r) => r.resident_p50_ms !== undefined)) return {};
  return {
    resident_p50_ms: pick('resident_p50_ms'),
    resident_p95_ms: pick('resident_p95_ms'),
    resident_same_answers: rounds.reduce((n, r) => n + r.resident_same_answers, 0),
    candidates_resident: pick('candidates_resident'),
  };
}

/** Each size's medians over its rounds, and each size's p50 over the previous size's, for each way. */
export function aggregateKeywordScale(run) {
  const sizes = run.sizes.map(({ records, rounds, resident_load_ms }) => {
    const pick = (field) => median(rounds.map((r) => r[field]));
    return {
      ...residentOf(rounds, pick),
      ...(resident_load_ms !== undefined ? { resident_load_ms } : {}),
      records,
      postings_per_question: pick('postings_per_question'),
      before_p50_ms: pick('before_p50_ms'),
      before_p95_ms: pick('before_p95_ms'),
      after_p50_ms: pick('after_p50_ms'),
      after_p95_ms: pick('after_p95_ms'),
      after_over_before: round(median(rounds.map((r) => r.after_p50_ms / r.before_p50_ms))),
      each_round: rounds.map((r) => round(r.after_p50_ms / r.before_p50_ms)),
      same_answers: rounds.reduce((n, r) => n + r.same_answers, 0),
      answers: rounds.reduce((n, r) => n + r.questions, 0),
      candidates_before: pick('candidates_before'),
      candidates_after: pick('candidates_after'),
      load_average_1m: rounds.map((r) => r.load_average_1m),
    };
  });
  const growth = sizes.slice(1).map((s, i) => ({
    from: sizes[i].records,
    to: s.records,
    before: round(s.before_p50_ms / sizes[i].before_p50_ms),
    after: round(s.after_p50_ms / sizes[i].after_p50_ms),
    ...(s.resident_p50_ms !== undefined && sizes[i].resident_p50_ms !== undefined ? { resident: round(s.resident_p50_ms / sizes[i].resident_p50_ms) } : {}),
  }));
  return { ...run, rounds: run.sizes[0]?.rounds.length ?? 0, summary: { sizes, growth } };
}

const ms = (value) => value.toFixed(1);
const times = (value) => `${value.toFixed(2)}×`;
const loads = (values) => (Math.min(...values) === Math.max(...values) ? values[0].toFixed(2) : `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`);

/** The markdown of docs/testing.md's keyword-scale section. */
export function renderKeywordScaleSection(report) {
  const { sizes, growth } = report.summary;
  if (sizes.every((s) => s.resident_p50_ms !== undefined)) return renderWithResident(report);
  return [
    `Measured ${report.date.slice(0, 10)} on ${report.cores} cores, Node ${report.node}: ${report.source}, the keyword side's ${report.pool} records, p50 and p95 in ms, median of ${report.rounds} rounds (each round every question to both functions in turn):`,
    '',
    '| records | postings per question | 012 p50 | p95 | 015 p50 | p95 | 015 / 012 (each round) | same answers | candidates counted 012 / 015 | load avg (1 min) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...sizes.map(
      (s) =>
        `| ${s.records.toLocaleString('en-US')} | ${s.postings_per_question.toLocaleString('en-US')} | ${ms(s.before_p50_ms)} | ${ms(s.before_p95_ms)} | ${ms(s.after_p50_ms)} | ${ms(s.after_p95_ms)} | **${times(s.after_over_before)}** (${s.each_round.map((r) => r.toFixed(2)).join(', ')}) | ${s.same_answers} of ${s.answers} | ${s.candidates_before.toLocaleString('en-US')} / ${s.candidates_after.toLocaleString('en-US')} | ${loads(s.load_average_1m)} |`,
    ),
    '',
    ...growth.map((g) => `From ${g.from.toLocaleString('en-US')} to ${g.to.toLocaleString('en-US')} records the p50 grows ${times(g.before)} with 012's statement and ${times(g.after)} with 015's.`),
  ].join('\n');
}

/** The section once the local server's way is measured too. */
function renderWithResident(report) {
  const { sizes, growth } = report.summary;
  const n = (value) => value.toLocaleString('en-US');
  return [
    `Measured ${report.date.slice(0, 10)} on ${report.cores} cores, Node ${report.node}: ${report.source}, the keyword side's ${report.pool} records, p50 and p95 in ms, median of ${report.rounds} rounds (each round every question to the three ways in turn). "In memory" is the local server's way, the question's analysis by the store included; "same answers" compares each with 012's:`,
    '',
    '| records | postings per question | 012 p50 | p95 | 015 p50 | p95 | in memory p50 | p95 | 015 / 012 (each round) | same answers 015 / in memory | candidates counted 012 / 015 / in memory | load avg (1 min) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...sizes.map(
      (s) =>
        `| ${n(s.records)} | ${n(s.postings_per_question)} | ${ms(s.before_p50_ms)} | ${ms(s.before_p95_ms)} | ${ms(s.after_p50_ms)} | ${ms(s.after_p95_ms)} | ${ms(s.resident_p50_ms)} | ${ms(s.resident_p95_ms)} | **${times(s.after_over_before)}** (${s.each_round.map((r) => r.toFixed(2)).join(', ')}) | ${s.same_answers} / ${s.resident_same_answers} of ${s.answers} | ${n(s.candidates_before)} / ${n(s.candidates_after)} / ${n(s.candidates_resident)} | ${loads(s.load_average_1m)} |`,
    ),
    '',
    ...growth.map((g) => `From ${n(g.from)} to ${n(g.to)} records the p50 grows ${times(g.before)} with 012's statement, ${times(g.after)} with 015's and ${times(g.resident)} in memory.`),
    ...(sizes.every((s) => s.resident_load_ms !== undefined)
      ? [`The copy in memory loaded in ${sizes.map((s) => `${n(s.resident_load_ms)} ms at ${n(s.records)} records`).join(', ')} (once each, in this process).`]
      : []),
  ].join('\n');
}
