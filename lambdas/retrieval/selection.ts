/**
 * From ranked candidates to the results shown: the relevance profile's admission
 * (relevance.ts), the request's boosts (topic, task type, technologies, versions),
 * then the weak tail cut relative to the best boosted score, at most `max_results`.
 * The technologies and versions a question names in its text (query-analysis.ts)
 * count as if the caller had passed them, the caller's own winning where both say.
 *
 * Pure: it reads nothing, so the evaluation replays it over many profiles.
 */
import type { SearchKnowledgeInput, Topic } from '../../schema/tools.ts';
import type { StoredRecord } from '../records/record-read.ts';
import { canonicalTechnologies, sameTechnology, writtenForAnotherStack } from '../records/technology-vocabulary.ts';
import { checkApplicability } from './applicability.ts';
import type { RankResult, RankedCandidate } from './rank.ts';
import { JUDGED_CANDIDATES, candidateFeatures, relevanceProbability, type Features, type RelevanceProfile, type StackSignal } from './relevance.ts';

/** Ranking multipliers for requested topic, task type, technology and version. */
const TOPIC_BOOST = 1.25;
const TASK_BOOST = 1.1;
const TECH_BOOST = 1.2;
const VERSION_BOOST = 1.1;
/** A record whose constraint excludes the requested version sinks below every applying one. */
const EXCLUDED_PENALTY = 0.01;

/** What the request and the question's own words ask for besides the subject. */
export interface SearchContext {
  readonly topics: readonly Topic[];
  /** Canonical: the caller's `technologies`, then stack technologies the query names. */
  readonly technologies: readonly string[];
  /** Of those, the ones only the query's text named. */
  readonly namedInText: readonly string[];
  /** The caller's `versions`, then versions written after a named technology. */
  readonly versions: Readonly<Record<string, string>>;
  readonly taskType?: string;
}

export const topicsOf = (input: Pick<SearchKnowledgeInput, 'topic'>): Topic[] =>
  input.topic === undefined ? [] : Array.isArray(input.topic) ? input.topic : [input.topic];

export function searchContext(input: SearchKnowledgeInput, analysis: RankResult['analysis']): SearchContext {
  const requested = canonicalTechnologies(input.technologies);
  const namedInText = analysis.technologies.filter((t) => !requested.some((r) => sameTechnology(r, t)));
  return {
    topics: topicsOf(input),
    technologies: [...requested, ...namedInText],
    namedInText,
    versions: { ...analysis.versions, ...input.versions },
    taskType: input.task_type,
  };
}

/** One candidate as the profile judged it. */
export interface Judged {
  readonly candidate: RankedCandidate;
  readonly record: StoredRecord;
  readonly features: Features;
  readonly probability: number;
}

export interface Ranked {
  record: StoredRecord;
  score: number;
  note?: string;
  technologyMatch: boolean;
  probability: number;
}

function stackSignal(context: SearchContext): StackSignal {
  return {
    named: context.technologies,
    matches: (appliesTo) => appliesTo.some((a) => context.technologies.some((t) => sameTechnology(a, t))),
    otherStack: (appliesTo) => writtenForAnotherStack(context.technologies, appliesTo),
  };
}

/**
 * Which rival a candidate's margin is measured against: the third best of the others.
 * Against the runner-up, a question two or three records answer equally well (timeouts
 * on outbound calls: Node, Python, Go) would look like one no record stands out for.
 * Measured on the tune halves against the first and the fifth rival: about the same,
 * this one a little ahead in both modes.
 */
const RIVAL = 3;

/**
 * The first `depth` candidates (`JUDGED_CANDIDATES` unless a reranker looks deeper)
 * whose records are at hand, with their evidence and probability.
 */
export function judgeCandidates(
  ranking: Pick<RankResult, 'candidates' | 'concepts'>,
  records: ReadonlyMap<string, StoredRecord>,
  context: SearchContext,
  profile: Pick<RelevanceProfile, 'weights' | 'bias'>,
  depth: number = JUDGED_CANDIDATES,
): Judged[] {
  const best = { bm25: Math.max(0, ...ranking.candidates.map((c) => c.bm25)), score: ranking.candidates[0]?.score ?? 0 };
  const stack = stackSignal(context);
  const judged = ranking.candidates.slice(0, depth);
  // The strongest rival of each candidate: the best of the others.
  const rivalOf = (candidate: RankedCandidate) => {
    const others = ranking.candidates.filter((c) => c !== candidate);
    const scores = others.map((c) => c.score).sort((a, b) => b - a);
    const sims = others.map((c) => c.similarity ?? -1).sort((a, b) => b - a);
    return { score: Math.max(0, scores[RIVAL - 1] ?? 0), similarity: sims[RIVAL - 1] ?? -1 };
  };
  return judged.flatMap((candidate) => {
    const record = records.get(candidate.id);
    if (!record) return [];
    const features = candidateFeatures(candidate, best, rivalOf(candidate), ranking.concepts, record.applies_to.map((a) => a.name), stack);
    return [{ candidate, record, features, probability: relevanceProbability(features, profile) }];
  });
}

/**
 * A judged candidate with the request's boosts applied: everything the choice of
 * results needs that does not depend on the profile. The evaluation keeps these
 * (slug, features, boosted score, exclusion) to replay many profiles.
 */
export interface Scored {
  readonly record: StoredRecord;
  readonly features: Features;
  /** The fused score times the topic, task, technology and version boosts. */
  readonly boosted: number;
  /** Set when a requested version is outside the record's constraint. */
  readonly note?: string;
  readonly technologyMatch: boolean;
}

/** What the request does to a record's score: the product of its boosts, and the version exclusion's note. */
export interface RequestBoost {
  readonly factor: number;
  readonly note?: string;
  readonly technologyMatch: boolean;
}

/** The topic, task type, technology and version boosts of one record (a reranked search applies them too). */
export function requestBoost(record: StoredRecord, context: SearchContext): RequestBoost {
  const fit = checkApplicability(record.applies_to, context.technologies, context.versions);
  let factor = 1;
  if (context.topics.includes(record.topic as Topic)) factor *= TOPIC_BOOST;
  if (context.taskType && record.task_types.includes(context.taskType)) factor *= TASK_BOOST;
  if (fit.technologyMatch) factor *= TECH_BOOST;
  if (fit.versionMatch) factor *= VERSION_BOOST;
  if (fit.excludedNote) factor *= EXCLUDED_PENALTY;
  return { factor, note: fit.excludedNote, technologyMatch: fit.technologyMatch };
}

/** The judged candidates with their boosts (see `Scored`). */
export function scoreCandidates(ranking: Pick<RankResult, 'candidates' | 'concepts'>, records: ReadonlyMap<string, StoredRecord>, context: SearchContext): Scored[] {
  return judgeCandidates(ranking, records, context, { weights: {}, bias: 0 }).map(({ candidate, record, features }) => {
    const boost = requestBoost(record, context);
    return { record, features, boosted: candidate.score * boost.factor, note: boost.note, technologyMatch: boost.technologyMatch };
  });
}

/**
 * The results: candidates the profile admits, by boosted score, without the weak
 * tail (under `minShareOfTop` of the best), at most `maxResults`. Works on anything
 * shaped like `Scored`, so the evaluation replays it on kept scores.
 */
export function pickResults<T extends Pick<Scored, 'features' | 'boosted' | 'note'>>(
  scored: readonly T[],
  profile: Pick<RelevanceProfile, 'weights' | 'bias' | 'threshold' | 'minShareOfTop'>,
  maxResults: number,
): (T & { probability: number })[] {
  return cutTail(admitCandidates(scored, profile).filter((s) => s.admitted), profile.minShareOfTop, maxResults);
}

/** Each candidate with the profile's probability and whether it reaches the threshold (the admission `pickResults` starts with). */
export function admitCandidates<T extends Pick<Scored, 'features'>>(
  scored: readonly T[],
  profile: Pick<RelevanceProfile, 'weights' | 'bias' | 'threshold'>,
): (T & { probability: number; admitted: boolean })[] {
  return scored.map((s) => {
    const probability = relevanceProbability(s.features, profile);
    return { ...s, probability, admitted: probability >= profile.threshold };
  });
}

/** The admitted candidates by boosted score, without the weak tail (under `minShareOfTop` of the best), at most `maxResults`. */
export function cutTail<T extends { readonly boosted: number; readonly note?: string }>(admitted: readonly T[], minShareOfTop: number, maxResults: number): T[] {
  const sorted = [...admitted].sort((a, b) => b.boosted - a.boosted);
  // A record the requested version excludes sank to the bottom; it stays (last, with its note)
  // so the agent learns the guidance exists for other versions, instead of being cut as weak.
  const best = sorted.find((r) => !r.note)?.boosted ?? sorted[0]?.boosted ?? 0;
  return sorted.filter((r, i) => i === 0 || r.note !== undefined || r.boosted >= minShareOfTop * best).slice(0, maxResults);
}

/** Admission, boosts and the tail cut (see the module comment). */
export function selectResults(
  ranking: Pick<RankResult, 'candidates' | 'concepts' | 'analysis'>,
  records: ReadonlyMap<string, StoredRecord>,
  input: SearchKnowledgeInput,
  profile: RelevanceProfile,
): Ranked[] {
  const scored = scoreCandidates(ranking, records, searchContext(input, ranking.analysis));
  return pickResults(scored, profile, input.max_results).map((s) => ({
    record: s.record,
    score: s.boosted,
    note: s.note,
    technologyMatch: s.technologyMatch,
    probability: s.probability,
  }));
}
