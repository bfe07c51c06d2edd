/**
 * Honesty evaluation on the guidance corpus, through the real `search_knowledge`
 * path as an agent calls it, per retrieval mode, on two question sets:
 *
 * - `real` (test/fixtures/real-questions): developers' own words from public issue
 *   threads and Q&A pages, covered ones and uncovered ones (near misses, other
 *   engineering problems, off-topic questions), split **by record** (`splitByRecord`):
 *   a record's questions all fall in one half;
 * - `written` (test/fixtures/guidance-eval): questions written with the records, split
 *   by question id; a second tune set.
 *
 * Per set, mode and half it measures, on covered questions: the right record first
 * (a relevant one, grade ≥ 1), a wrong record first, `no_match` although covered,
 * nDCG@10 of what is shown (asked with max_results 10), precision of what is shown;
 * on uncovered questions: `no_match`, overall and per kind.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { searchKnowledgeInput, type SearchKnowledgeOutput } from '../../schema/tools.ts';
import type { QuestionReplay } from '../../lambdas/retrieval/relevance-replay.ts';
import type { RelevanceProfile } from '../../lambdas/retrieval/relevance.ts';
import { pickResults } from '../../lambdas/retrieval/selection.ts';
import { ndcgAt, splitByQueryId } from './metrics.ts';

export const QUESTION_KINDS = ['covered', 'near_miss', 'uncovered', 'off_topic'] as const;

export const guidanceQuestion = z.strictObject({
  id: z.string().min(1),
  /** Real questions: what kind they are, the record they were collected for (or are near), and the thread. */
  kind: z.enum(QUESTION_KINDS).optional(),
  record: z.string().optional(),
  query: z.string().min(2).max(2000),
  source: z.url().optional(),
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

/** A question set and the ids of its tune half. */
export interface QuestionSet {
  readonly name: string;
  readonly questions: readonly GuidanceQuestion[];
  readonly tune: ReadonlySet<string>;
}

/**
 * The tune half by record: records are split by a fixed hash of their slug, and a
 * question goes with the record it was collected for (or is a near miss of); one
 * tied to no record (uncovered, off-topic) is split by its own id.
 */
export function splitByRecord(questions: readonly GuidanceQuestion[]): Set<string> {
  const slugs = [...new Set(questions.flatMap((q) => (q.record ? [q.record] : [])))];
  const tuneRecords = new Set(splitByQueryId(slugs, 'record:').tune);
  const loose = new Set(splitByQueryId(questions.filter((q) => !q.record).map((q) => q.id), 'record:').tune);
  return new Set(questions.filter((q) => (q.record ? tuneRecords.has(q.record) : loose.has(q.id))).map((q) => q.id));
}

export async function loadQuestionSet(name: string, dir: string, split: 'record' | 'id'): Promise<QuestionSet> {
  const questions = await loadQuestions(dir);
  const tune = split === 'record' ? splitByRecord(questions) : new Set(splitByQueryId(questions.map((q) => q.id)).tune);
  return { name, questions, tune };
}

export interface HonestyMetrics {
  covered: number;
  right_first: number;
  wrong_first: number;
  false_no_match: number;
  ndcg_at_10: number;
  precision_shown: number;
  /** Results shown per covered question, on average. */
  shown_per_question: number;
  uncovered: number;
  no_match_uncovered: number;
  /** Per kind of uncovered question, where the set labels them: count and no_match share. */
  off_topic: number;
  no_match_off_topic: number;
  near_miss: number;
  no_match_near_miss: number;
  engineering: number;
  no_match_engineering: number;
}

/** One answered question: the slugs shown, in order, and whether the answer was `no_match`. */
export interface Answered {
  question: GuidanceQuestion;
  slugs: string[];
  noMatch: boolean;
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 1000);
const isCovered = (q: GuidanceQuestion) => Object.keys(q.relevant).length > 0;

export function honestyMetrics(answers: readonly Answered[]): HonestyMetrics {
  const covered = answers.filter((a) => isCovered(a.question));
  const uncovered = answers.filter((a) => !isCovered(a.question));
  const grade = (a: Answered, slug: string | undefined) => (slug === undefined ? 0 : (a.question.relevant[slug] ?? 0));
  let ndcg = 0;
  let right = 0;
  let wrong = 0;
  let shown = 0;
  let relevantShown = 0;
  let noMatch = 0;
  for (const a of covered) {
    ndcg += ndcgAt(10, a.slugs, new Map(Object.entries(a.question.relevant)));
    if (a.noMatch) noMatch += 1;
    else if (grade(a, a.slugs[0]) > 0) right += 1;
    else wrong += 1;
    shown += a.slugs.length;
    relevantShown += a.slugs.filter((s) => grade(a, s) > 0).length;
  }
  const ofKind = (kind: GuidanceQuestion['kind']) => uncovered.filter((a) => a.question.kind === kind);
  const noMatchShare = (list: Answered[]) => share(list.filter((a) => a.noMatch).length, list.length);
  return {
    covered: covered.length,
    right_first: share(right, covered.length),
    wrong_first: share(wrong, covered.length),
    false_no_match: share(noMatch, covered.length),
    ndcg_at_10: share(ndcg, covered.length),
    precision_shown: share(relevantShown, shown),
    shown_per_question: share(shown, covered.length),
    uncovered: uncovered.length,
    no_match_uncovered: noMatchShare(uncovered),
    off_topic: ofKind('off_topic').length,
    no_match_off_topic: noMatchShare(ofKind('off_topic')),
    near_miss: ofKind('near_miss').length,
    no_match_near_miss: noMatchShare(ofKind('near_miss')),
    engineering: ofKind('uncovered').length,
    no_match_engineering: noMatchShare(ofKind('uncovered')),
  };
}

/** The tool arguments an agent would send for the question (max_results 10 so nDCG@10 sees all that clears). */
export function toolArguments(question: GuidanceQuestion, maxResults = 10): unknown {
  const { id: _id, relevant: _relevant, kind: _kind, record: _record, source: _source, ...asked } = question;
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

/** Metrics on all questions of a set and on each half. */
export function byHalf(set: Pick<QuestionSet, 'tune'>, answers: readonly Answered[]): { all: HonestyMetrics; tune: HonestyMetrics; test: HonestyMetrics } {
  return {
    all: honestyMetrics(answers),
    tune: honestyMetrics(answers.filter((a) => set.tune.has(a.question.id))),
    test: honestyMetrics(answers.filter((a) => !set.tune.has(a.question.id))),
  };
}

/** The answers a profile gives, replayed from kept scores (no database work). */
export function replayAnswers(questions: readonly GuidanceQuestion[], replays: readonly QuestionReplay[], profile: RelevanceProfile): Answered[] {
  return questions.map((question, i) => {
    const replay = replays[i]!;
    const slugs = pickResults(replay.candidates, profile, replay.maxResults).map((c) => c.slug);
    return { question, slugs, noMatch: slugs.length === 0 };
  });
}

const COLUMNS: [keyof HonestyMetrics, string][] = [
  ['covered', 'covered'],
  ['right_first', 'right first'],
  ['wrong_first', 'wrong first'],
  ['false_no_match', 'no_match (covered)'],
  ['ndcg_at_10', 'nDCG@10'],
  ['precision_shown', 'precision'],
  ['shown_per_question', 'shown/q'],
  ['uncovered', 'uncovered'],
  ['no_match_uncovered', 'no_match (uncovered)'],
  ['no_match_off_topic', 'off-topic'],
  ['no_match_near_miss', 'near misses'],
  ['no_match_engineering', 'other uncovered'],
];

const COUNTS: ReadonlySet<keyof HonestyMetrics> = new Set(['covered', 'uncovered']);

/** A markdown table: one row per set, mode and half. Kind columns are blank where a set does not label kinds. */
export function formatHonesty(rows: Record<string, Record<string, HonestyMetrics>>): string {
  const header = `| set, mode | half | ${COLUMNS.map(([, label]) => label).join(' | ')} |`;
  const rule = `|---|---|${COLUMNS.map(() => '---').join('|')}|`;
  const cell = (m: HonestyMetrics, key: keyof HonestyMetrics) => {
    if (COUNTS.has(key)) return String(m[key]);
    const count = key === 'no_match_off_topic' ? m.off_topic : key === 'no_match_near_miss' ? m.near_miss : key === 'no_match_engineering' ? m.engineering : 1;
    return count === 0 ? '' : m[key].toFixed(3);
  };
  const lines = Object.entries(rows).flatMap(([name, halves]) =>
    Object.entries(halves).map(([half, m]) => `| ${name} | ${half} | ${COLUMNS.map(([key]) => cell(m, key)).join(' | ')} |`),
  );
  return [header, rule, ...lines].join('\n');
}
