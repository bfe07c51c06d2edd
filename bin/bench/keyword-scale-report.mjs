/**
 * The report of `bench:keyword-scale` (`keyword-scale.ts`): medians over rounds, the
 * growth from one size to the next, and the section of docs/testing.md rendered from
 * the report's JSON (`--docs` writes docs/bench/keyword-scale.json and the section through
 * docs-report.mjs; test/architecture/bench-tables.test.ts checks that the two agree). Plain JavaScript,
 * importable without a loader and without the store.
 */
import { median } from './load-report.mjs';

const round = (value, digits = 2) => Number(value.toFixed(digits));

/** Each size's medians over its rounds, and each size's p50 over the previous size's, for both functions. */
export function aggregateKeywordScale(run) {
  const sizes = run.sizes.map(({ records, rounds }) => {
    const pick = (field) => median(rounds.map((r) => r[field]));
    return {
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
  }));
  return { ...run, rounds: run.sizes[0]?.rounds.length ?? 0, summary: { sizes, growth } };
}

const ms = (value) => value.toFixed(1);
const times = (value) => `${value.toFixed(2)}×`;
const loads = (values) => (Math.min(...values) === Math.max(...values) ? values[0].toFixed(2) : `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`);

/** The markdown of docs/testing.md's keyword-scale section. */
export function renderKeywordScaleSection(report) {
  const { sizes, growth } = report.summary;
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
