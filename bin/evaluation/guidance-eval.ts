/**
 * Honesty evaluation on the guidance corpus: judged questions (graded relevance,
 * asked the way agents describe decisions, with and without technologies, versions
 * and topic) and uncovered ones (the corpus has nothing for them), answered through
 * the real `search_knowledge` path as an agent calls it, per retrieval mode.
 *
 * Per mode and per half of a fixed split (`splitByQueryId`: tune thresholds on one
 * half, report the other), it measures:
 * - nDCG@10 of the shown results (asked with max_results 10) on judged questions,
 * - first result relevant: the share of judged questions whose first result is,
 * - precision of what is shown: relevant results / results shown, judged questions,
 * - false no_match: judged questions answered `no_match`,
 * - no_match on uncovered questions (the higher the better).
 * Questions live in `test/fixtures/guidance-eval/*.jsonl`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { searchKnowledgeInput, type SearchKnowledgeInput, type SearchKnowledgeOutput } from '../../schema/tools.ts';
import { RELEVANCE, selectResults, type RelevancePolicy } from '../../lambdas/retrieval/search-service.ts';
import type { RankedCandidate } from '../../lambdas/retrieval/rank.ts';
import type { StoredRecord } from '../../lambdas/records/record-read.ts';
import { ndcgAt, splitByQueryId } from './metrics.ts';

export const guidanceQuestion = z.strictObject({
  id: z.string().min(1),
  query: z.string().min(2).max(2000),
  technologies: z.array(z.string()).optional(),
  versions: z.record(z.string(), z.string()).optional(),
  topic: z.union([z.string(), z.array(z.string())]).optional(),
  task_type: z.string().optional(),
  /** slug → grade (2 answers it, 1 helps); empty for a question the corpus does not cover. */
  relevant: z.record(z.string(), z.number().int().min(1).max(3)),
});
export type GuidanceQuestion = z.output<typeof guidanceQuestion>;

/** Every question of every `.jsonl` file in `dir`, validated; ids must be unique. */
export async function loadQuestions(dir: string): Promise<GuidanceQuestion[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.jsonl')).sort();
  const questions: GuidanceQuestion[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const lines = (await readFile(join(dir, file), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const parsed = guidanceQuestion.safeParse(JSON.parse(line));
      if (!parsed.success) throw new Error(`${file}:${i + 1}: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
      if (seen.has(parsed.data.id)) throw new Error(`${file}:${i + 1}: question id ${parsed.data.id} appears twice`);
      seen.add(parsed.data.id);
      questions.push(parsed.data);
    });
  }
  return questions;
}

export interface HonestyMetrics {
  judged: number;
  uncovered: number;
  ndcg_at_10: number;
  first_relevant: number;
  precision_shown: number;
  false_no_match: number;
  uncovered_no_match: number;
  /** Results shown per judged question, on average. */
  shown_per_question: number;
}

/** One answered question: the slugs shown, in order, and whether the answer was `no_match`. */
export interface Answered {
  question: GuidanceQuestion;
  slugs: string[];
  noMatch: boolean;
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 1000);

export function honestyMetrics(answers: readonly Answered[]): HonestyMetrics {
  const judged = answers.filter((a) => Object.keys(a.question.relevant).length > 0);
  const uncovered = answers.filter((a) => Object.keys(a.question.relevant).length === 0);
  const grade = (a: Answered, slug: string | undefined) => (slug === undefined ? 0 : (a.question.relevant[slug] ?? 0));
  let ndcg = 0;
  let first = 0;
  let shown = 0;
  let relevantShown = 0;
  let falseNoMatch = 0;
  for (const a of judged) {
    ndcg += ndcgAt(10, a.slugs, new Map(Object.entries(a.question.relevant)));
    if (grade(a, a.slugs[0]) > 0) first += 1;
    shown += a.slugs.length;
    relevantShown += a.slugs.filter((s) => grade(a, s) > 0).length;
    if (a.noMatch) falseNoMatch += 1;
  }
  return {
    judged: judged.length,
    uncovered: uncovered.length,
    ndcg_at_10: share(ndcg, judged.length),
    first_relevant: share(first, judged.length),
    precision_shown: share(relevantShown, shown),
    false_no_match: share(falseNoMatch, judged.length),
    uncovered_no_match: share(uncovered.filter((a) => a.noMatch).length, uncovered.length),
    shown_per_question: share(shown, judged.length),
  };
}

/** The tool arguments an agent would send for the question (max_results 10 so nDCG@10 sees all that clears). */
export function toolArguments(question: GuidanceQuestion, maxResults = 10): unknown {
  const { id: _id, relevant: _relevant, ...asked } = question;
  return searchKnowledgeInput.parse({ ...asked, max_results: maxResults });
}

export type Search = (args: unknown) => Promise<SearchKnowledgeOutput>;

/** Answers every question through `search`. */
export async function answerAll(questions: readonly GuidanceQuestion[], search: Search): Promise<Answered[]> {
  const out: Answered[] = [];
  for (const question of questions) {
    const answer = await search(toolArguments(question));
    out.push({ question, slugs: answer.results.map((r) => r.slug), noMatch: answer.retrieval.mode === 'no_match' });
  }
  return out;
}

/** Metrics on all questions and on each fixed half. */
export function byHalf(answers: readonly Answered[]): { all: HonestyMetrics; tune: HonestyMetrics; test: HonestyMetrics } {
  const { tune } = splitByQueryId(answers.map((a) => a.question.id));
  const inTune = new Set(tune);
  return {
    all: honestyMetrics(answers),
    tune: honestyMetrics(answers.filter((a) => inTune.has(a.question.id))),
    test: honestyMetrics(answers.filter((a) => !inTune.has(a.question.id))),
  };
}

const COLUMNS: [keyof HonestyMetrics, string][] = [
  ['judged', 'judged'],
  ['uncovered', 'uncov.'],
  ['ndcg_at_10', 'nDCG@10'],
  ['first_relevant', 'first rel.'],
  ['precision_shown', 'precision'],
  ['false_no_match', 'false no_match'],
  ['uncovered_no_match', 'uncov. no_match'],
  ['shown_per_question', 'shown/q'],
];

const COUNTS: ReadonlySet<keyof HonestyMetrics> = new Set(['judged', 'uncovered']);

/** A markdown table: one row per mode and half. */
export function formatHonesty(rows: Record<string, Record<string, HonestyMetrics>>): string {
  const header = `| mode | half | ${COLUMNS.map(([, label]) => label).join(' | ')} |`;
  const rule = `|---|---|${COLUMNS.map(() => '---').join('|')}|`;
  const lines = Object.entries(rows).flatMap(([mode, halves]) =>
    Object.entries(halves).map(([half, m]) => `| ${mode} | ${half} | ${COLUMNS.map(([key]) => (COUNTS.has(key) ? String(m[key]) : m[key].toFixed(3))).join(' | ')} |`),
  );
  return [header, rule, ...lines].join('\n');
}

/** One question's ranking before the relevance policy, with its candidates' records: what a sweep replays. */
export interface Replay {
  question: GuidanceQuestion;
  input: SearchKnowledgeInput;
  candidates: readonly RankedCandidate[];
  records: ReadonlyMap<string, StoredRecord>;
}

/** The answers a policy gives, replayed from rankings (no database work). */
export function replay(replays: readonly Replay[], policy: RelevancePolicy): Answered[] {
  return replays.map((r) => {
    const slugs = selectResults(r.candidates, r.records, r.input, policy).map((x) => x.record.slug);
    return { question: r.question, slugs, noMatch: slugs.length === 0 };
  });
}

/** The grid a sweep searches; `RELEVANCE` (the shipped policy) is always in it. */
export function policyGrid(): RelevancePolicy[] {
  const grid: RelevancePolicy[] = [];
  for (const minCoverage of [0.4, 0.5, 0.6, 0.7, 0.8])
    for (const lexicalMinSimilarity of [0, 0.2, 0.3, 0.4, 0.5])
      for (const supportedMinCoverage of [0.25, 0.4])
        for (const supportingMinSimilarity of [0.5, 0.6, 0.7])
          for (const denseAloneMinSimilarity of [Infinity, 0.7, 0.8])
            for (const minShareOfTop of [0.25, 0.4, 0.55, 0.7, 0.85])
              grid.push({ minCoverage, lexicalMinSimilarity, supportedMinCoverage, supportingMinSimilarity, denseAloneMinSimilarity, minShareOfTop });
  return grid;
}

/**
 * How good a policy is on the tune half of every mode: it must keep false no_match
 * at most 5% and the first result relevant at least 85% in each mode, and then
 * scores the sum of nDCG@10, precision of what is shown and no_match on uncovered
 * questions, over the modes. -Infinity when a constraint fails.
 */
export function objective(perMode: readonly HonestyMetrics[]): number {
  if (perMode.some((m) => m.false_no_match > 0.05 || m.first_relevant < 0.85)) return -Infinity;
  return perMode.reduce((sum, m) => sum + m.ndcg_at_10 + m.precision_shown + m.uncovered_no_match, 0);
}

/** The best policy on the tune half (each mode's replays), by `objective`. */
export function sweep(modes: readonly (readonly Replay[])[]): { policy: RelevancePolicy; score: number } {
  const tuneIds = new Set(splitByQueryId(modes[0]!.map((r) => r.question.id)).tune);
  const tune = modes.map((replays) => replays.filter((r) => tuneIds.has(r.question.id)));
  let best = { policy: RELEVANCE, score: objective(tune.map((t) => honestyMetrics(replay(t, RELEVANCE)))) };
  for (const policy of policyGrid()) {
    const score = objective(tune.map((t) => honestyMetrics(replay(t, policy))));
    if (score > best.score) best = { policy, score };
  }
  return best;
}
