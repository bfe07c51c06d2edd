/**
 * `search_knowledge`: retrieval, applicability, relevance threshold, answer
 * shaping and the privacy-preserving search event.
 *
 * This module does not validate arguments (the tool does) and never logs or
 * stores the query text: only its salted hash reaches `search_events`.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Logger } from '../ports/logger.ts';
import { hashQuery, hashSearchInput } from '../privacy/hashing.ts';
import type { GuidanceResult, SearchKnowledgeInput, SearchKnowledgeOutput, Topic } from '../../schema/tools.ts';
import { approvedCoverage, loadApprovedByIds, type StoredRecord } from '../records/record-read.ts';
import { BRIEF_LIST_ITEMS, shapeRecord } from '../records/record-shape.ts';
import { checkApplicability } from './applicability.ts';
import { tokensWithin } from './token-budget.ts';
import { cachedQueryEmbedding, embedNewQuery } from './query-embedding.ts';
import { rankCandidates, type RankedCandidate } from './rank.ts';
import { canonicalTechnologies, sameTechnology } from '../records/technology-vocabulary.ts';
import type { SearchCache } from './search-cache.ts';
import { DirectSearchEvents, type SearchEventSink } from './search-events.ts';

export interface SearchDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  /** Undefined when no embedding provider is configured. */
  readonly embedder?: Embedder;
  readonly logger: Logger;
  /** Time allowed for the query embedding on a cache miss. @default 1500 */
  readonly embedTimeoutMs?: number;
  /** Answers and records kept between calls; without it every call reads everything. */
  readonly cache?: SearchCache;
  /** Where search events go. @default written at once, one per search */
  readonly events?: SearchEventSink;
  /** Overrides the relevance policy (evaluation sweeps only). */
  readonly relevance?: RelevancePolicy;
}

/** How many candidates each retrieval side contributes. */
export const CANDIDATE_POOL = 50;
/**
 * When a candidate is shown. A record is presented when it contains `minCoverage`
 * of the query's IDF mass (rare words weigh most, so sharing only "use" or "error"
 * is not enough) and, when a query vector exists, the dense side does not
 * contradict it (`lexicalMinSimilarity`); or when a partial lexical match
 * (`supportedMinCoverage`) is backed by the dense side (`supportingMinSimilarity`);
 * or, only if `denseAloneMinSimilarity` is set, by similarity alone. Results
 * scoring below `minShareOfTop` of the best one are the weak tail beside it.
 * The values are chosen on the tune half of the evaluation set (README,
 * "Answer quality"); `npm run eval:guidance -- --sweep` redoes the choice.
 */
export interface RelevancePolicy {
  readonly minCoverage: number;
  readonly lexicalMinSimilarity: number;
  readonly supportedMinCoverage: number;
  readonly supportingMinSimilarity: number;
  readonly denseAloneMinSimilarity: number;
  readonly minShareOfTop: number;
}

/**
 * Chosen on the tune half of test/fixtures/guidance-eval (124 records, 139 judged and
 * 77 uncovered questions) from 2,250 policies by `objective` in
 * bin/evaluation/guidance-eval.ts. Admitting a record on similarity alone (0.7 or
 * 0.8) was in the grid and never won: USE-lite's cosine is not strong enough evidence
 * on its own. The previous policy (coverage 0.4 alone, tail at 0.25 of the top)
 * showed 3.4 results per question at a precision of 0.33.
 */
export const RELEVANCE: RelevancePolicy = {
  minCoverage: 0.4,
  lexicalMinSimilarity: 0.4,
  supportedMinCoverage: 0.4,
  supportingMinSimilarity: 0.5,
  denseAloneMinSimilarity: Infinity,
  minShareOfTop: 0.85,
};
/** Ranking multipliers for requested topic, task type, technology and version. */
const TOPIC_BOOST = 1.25;
const TASK_BOOST = 1.1;
const TECH_BOOST = 1.2;
const VERSION_BOOST = 1.1;
/** A record whose constraint excludes the requested version sinks below every applying one. */
const EXCLUDED_PENALTY = 0.01;

export interface Ranked {
  record: StoredRecord;
  score: number;
  note?: string;
  technologyMatch: boolean;
}

/** The candidates with evidence enough to be shown at all (before the tail is cut). */
function admitted(candidates: readonly RankedCandidate[], policy: RelevancePolicy): RankedCandidate[] {
  return candidates.filter((c) => {
    const similarity = c.similarity;
    if (c.coverage >= policy.minCoverage && (similarity === undefined || similarity >= policy.lexicalMinSimilarity)) return true;
    if (similarity === undefined) return false;
    if (c.coverage >= policy.supportedMinCoverage && similarity >= policy.supportingMinSimilarity) return true;
    return similarity >= policy.denseAloneMinSimilarity;
  });
}

/**
 * From ranked candidates to the results shown: the admission rules, the request's
 * boosts (topic, task type, technologies, versions), then the weak tail cut
 * relative to the best boosted score, at most `max_results`. The tail is cut after
 * the boosts so that a record declaring the requested technology is judged by its
 * boosted score. Pure, so the evaluation replays it over many policies.
 */
export function selectResults(
  candidates: readonly RankedCandidate[],
  records: ReadonlyMap<string, StoredRecord>,
  input: SearchKnowledgeInput,
  policy: RelevancePolicy = RELEVANCE,
): Ranked[] {
  const topics = topicsOf(input);
  const technologies = canonicalTechnologies(input.technologies);
  const ranked: Ranked[] = [];
  for (const candidate of admitted(candidates, policy)) {
    const record = records.get(candidate.id);
    if (!record) continue;
    const fit = checkApplicability(record.applies_to, technologies, input.versions);
    let score = candidate.score;
    if (topics.includes(record.topic as Topic)) score *= TOPIC_BOOST;
    if (input.task_type && record.task_types.includes(input.task_type)) score *= TASK_BOOST;
    if (fit.technologyMatch) score *= TECH_BOOST;
    if (fit.versionMatch) score *= VERSION_BOOST;
    if (fit.excludedNote) score *= EXCLUDED_PENALTY;
    ranked.push({ record, score, note: fit.excludedNote, technologyMatch: fit.technologyMatch });
  }
  ranked.sort((a, b) => b.score - a.score || a.record.slug.localeCompare(b.record.slug));
  // A record the requested version excludes sank to the bottom; it stays (last, with its note)
  // so the agent learns the guidance exists for other versions, instead of being cut as weak.
  const best = ranked.find((r) => !r.note)?.score ?? ranked[0]?.score ?? 0;
  return ranked.filter((r, i) => i === 0 || r.note !== undefined || r.score >= policy.minShareOfTop * best).slice(0, input.max_results);
}

export async function searchKnowledge(deps: SearchDeps, input: SearchKnowledgeInput): Promise<SearchKnowledgeOutput> {
  const pepper = await deps.secrets.pepper();
  const generation = await deps.cache?.current(deps.sql);
  const key = generation === undefined ? undefined : hashSearchInput(pepper, deps.embedder?.model ?? 'none', input);
  const kept = key === undefined ? undefined : deps.cache!.answer(generation!, key);
  // A repeated question gets the answer it got in this corpus generation, and runs no encoder.
  const output: SearchKnowledgeOutput = kept
    ? { ...kept, retrieval: { ...kept.retrieval, embedding_cache: kept.retrieval.embedding_cache ? 'hit' : undefined } }
    : await answer(deps, input, generation);
  // Degraded answers are not kept, so a recovered embedder is used at once.
  if (!kept && key !== undefined && !output.retrieval.degraded) deps.cache!.keepAnswer(generation!, key, output);

  const topics = topicsOf(input);
  await (deps.events ?? new DirectSearchEvents(deps.sql, deps.logger)).record({
    query_hash: hashQuery(pepper, input.query),
    topics,
    technologies: input.technologies,
    mode: output.retrieval.mode,
    result_count: output.results.length,
    degraded: output.retrieval.degraded,
  });
  deps.logger.info('search', {
    mode: output.retrieval.mode,
    results: output.results.length,
    candidates: output.retrieval.total_candidates,
    degraded: output.retrieval.degraded,
    embedding_cache: output.retrieval.embedding_cache,
    answer_cache: kept ? 'hit' : generation === undefined ? undefined : 'miss',
    truncated: output.retrieval.truncated,
    technology_filter_fallback: output.retrieval.technology_filter_fallback,
  });
  return output;
}

const topicsOf = (input: SearchKnowledgeInput): Topic[] => (input.topic === undefined ? [] : Array.isArray(input.topic) ? input.topic : [input.topic]);

/** Retrieval, applicability, the relevance threshold and shaping: the answer itself. */
async function answer(deps: SearchDeps, input: SearchKnowledgeInput, generation: number | undefined): Promise<SearchKnowledgeOutput> {
  const topics = topicsOf(input);
  const technologies = canonicalTechnologies(input.technologies);

  // Optimistically by cache key: one statement when the embedding is cached, the encoder and a second one when not.
  let embedding = await cachedQueryEmbedding(deps, input.query);
  const options = { mode: 'hybrid' as const, filter: {}, pool: CANDIDATE_POOL };
  let ranking = await rankCandidates(deps.sql, input.query, embedding.vector, options);
  if (ranking.vectorMissing) {
    embedding = await embedNewQuery(deps, input.query, embedding.vector?.cacheKey);
    ranking = await rankCandidates(deps.sql, input.query, embedding.vector, options);
  }
  // Requested technologies raise the records that declare them; they filter nothing out, so a
  // PostgreSQL record still answers a Node.js question about slow pagination (below an equally
  // relevant Node.js one).
  const policy = deps.relevance ?? RELEVANCE;
  const records = await readRecords(deps, generation, admitted(ranking.candidates, policy).map((c) => c.id));
  const top = selectResults(ranking.candidates, records, input, policy);
  const mode = top.length === 0 ? 'no_match' : embedding.vector ? 'hybrid' : 'keyword_fallback';
  // The requested technologies were dropped to answer: nothing shown declares any of them.
  const technologyFilterFallback = technologies.length > 0 && top.length > 0 && !top.some((r) => r.technologyMatch);
  const base: SearchKnowledgeOutput = {
    query_summary: querySummary(topics, technologies, input.task_type),
    results: [],
    retrieval: {
      mode,
      degraded: embedding.degradedReason !== undefined,
      degraded_reason: embedding.degradedReason,
      embedding_provider: deps.embedder?.provider,
      embedding_cache: embedding.cache,
      total_candidates: ranking.totalCandidates,
      technology_filter_fallback: technologyFilterFallback,
      truncated: false,
    },
    suggestions: mode === 'no_match' ? await noMatchSuggestions(deps, input, topics, await nearRecords(deps, generation, ranking.candidates)) : [],
  };
  return fitToBudget(
    base,
    top.map((r) => ({ ...shapeRecord(r.record, input.detail), applicability_note: r.note })),
    input.token_budget,
  );
}

/** The approved records of `ids`, from the cache where this generation's copy is there. */
async function readRecords(deps: SearchDeps, generation: number | undefined, ids: readonly string[]): Promise<Map<string, StoredRecord>> {
  if (generation === undefined) return new Map((await loadApprovedByIds(deps.sql, ids)).map((r) => [r.id, r]));
  const { found, missing } = deps.cache!.knownRecords(generation, ids);
  const loaded = missing.length > 0 ? await loadApprovedByIds(deps.sql, missing) : [];
  deps.cache!.keepRecords(generation, loaded);
  return new Map([...found, ...loaded].map((r) => [r.id, r]));
}

function querySummary(topics: readonly string[], technologies: readonly string[], taskType?: string): string {
  const parts = [topics.join(', '), technologies.join(', '), taskType ?? ''].filter((p) => p.length > 0);
  return parts.length > 0 ? parts.join(' · ') : 'all topics';
}

/**
 * Adds results in rank order while the whole answer stays within the budget: the
 * JSON an agent's model reads (the text content, which is the structured content
 * serialized), counted with the documented tokenizer. The budget is a hard cap. The
 * top result is always kept: if even its brief form is too big, it shrinks step by
 * step (`compactForms`) until it fits, and `truncated` says that something was cut.
 */
async function fitToBudget(base: SearchKnowledgeOutput, results: GuidanceResult[], budget: number): Promise<SearchKnowledgeOutput> {
  const kept: GuidanceResult[] = [];
  let truncated = false;
  // Measured with the truncation note in place, so the final answer fits either way.
  const withNote = [...base.suggestions, TRUNCATION_NOTE];
  const fits = (list: GuidanceResult[]) => tokensWithin({ ...base, results: list, suggestions: withNote }, budget);
  for (const result of results) {
    if (await fits([...kept, result])) {
      kept.push(result);
      continue;
    }
    truncated = true;
    if (kept.length === 0) kept.push(await smallestFitting(result, fits));
    break;
  }
  return {
    ...base,
    results: kept,
    retrieval: { ...base.retrieval, truncated },
    suggestions: truncated ? withNote : base.suggestions,
  };
}

const TRUNCATION_NOTE = 'Cut to fit token_budget; get_guidance returns whole records.';

/** The first of the result's compact forms that fits, else the most compact one. */
async function smallestFitting(result: GuidanceResult, fits: (list: GuidanceResult[]) => Promise<boolean>): Promise<GuidanceResult> {
  const forms = compactForms(result);
  for (const form of forms) if (await fits([form])) return form;
  return forms.at(-1)!;
}

const firstWords = (text: string, n: number) => {
  const words = text.split(/\s+/);
  return words.length <= n ? text : `${words.slice(0, n).join(' ')} …`;
};

/**
 * A result from larger to smaller, every form still in the contract's shape: brief
 * (lists of two, no excerpts, no rationale); without summary, list items and all
 * sources but the first; the recommendation's first sentence; its first 20 words;
 * and the least that still names the guidance (its first 10 words, no technologies
 * or sources), for the smallest budgets. get_guidance has the whole record.
 */
function compactForms(result: GuidanceResult): GuidanceResult[] {
  const brief = briefOf(result);
  const bare: GuidanceResult = { ...brief, summary: undefined, conditions: [], exceptions: [], pitfalls: [], verification_checks: [], sources: brief.sources.slice(0, 1) };
  const sentence = bare.recommendation.split(/(?<=[.!?])\s/)[0]!;
  const firstSentence = { ...bare, recommendation: sentence === bare.recommendation ? sentence : `${sentence} …` };
  const shorter = { ...bare, title: firstWords(bare.title, 12), recommendation: firstWords(sentence, 20) };
  const least = {
    ...shorter,
    title: firstWords(bare.title, 6),
    recommendation: firstWords(sentence, 10),
    applies_to: [],
    updated_at: bare.updated_at.replace(/\.\d+Z$/, 'Z'),
    sources: [],
  };
  return [brief, bare, firstSentence, shorter, least];
}

function briefOf(result: GuidanceResult): GuidanceResult {
  const { rationale: _r, ...brief } = result;
  const short = (list: string[]) => list.slice(0, BRIEF_LIST_ITEMS);
  return {
    ...brief,
    conditions: short(brief.conditions),
    exceptions: short(brief.exceptions),
    pitfalls: short(brief.pitfalls),
    verification_checks: short(brief.verification_checks),
    sources: brief.sources.map(({ evidence_excerpt: _x, ...s }) => s),
  };
}

/** Candidates below the threshold whose technologies and topics a `no_match` names as the closest coverage. */
const NEAR_CANDIDATES = 3;

/**
 * What to do after a `no_match`: what the corpus covers near the question (the
 * technologies and topics of the closest records below the threshold, with how many
 * approved records each has), which requested technologies it has nothing for,
 * then how to ask better. Never guidance itself.
 */
/** The closest candidates below the threshold, read through the per-generation record cache. */
async function nearRecords(deps: SearchDeps, generation: number | undefined, candidates: readonly RankedCandidate[]): Promise<StoredRecord[]> {
  const ids = candidates.slice(0, NEAR_CANDIDATES).map((c) => c.id);
  const found = await readRecords(deps, generation, ids);
  return ids.flatMap((id) => found.get(id) ?? []);
}

async function noMatchSuggestions(deps: SearchDeps, input: SearchKnowledgeInput, topics: readonly string[], records: readonly StoredRecord[]): Promise<string[]> {
  const suggestions = ['Nothing in the knowledge base clears the relevance threshold for this decision; do not invent guidance for it.'];
  const coverage = await approvedCoverage(deps.sql);
  const requested = canonicalTechnologies(input.technologies);
  const uncovered = requested.filter((t) => ![...coverage.technologies.keys()].some((name) => sameTechnology(name, t)));
  if (uncovered.length > 0) suggestions.push(`The knowledge base has no guidance for ${uncovered.join(', ')}.`);
  const counted = (names: Iterable<string>, counts: Map<string, number>) =>
    [...new Set(names)].filter((n) => counts.has(n)).map((n) => `${n} (${counts.get(n)} record${counts.get(n) === 1 ? '' : 's'})`);
  const nearTech = counted(records.flatMap((r) => r.applies_to.map((a) => a.name)), coverage.technologies);
  const nearTopics = counted(records.map((r) => r.topic), coverage.topics);
  if (nearTech.length + nearTopics.length > 0) {
    suggestions.push(
      `Closest coverage: ${[nearTech.length ? `technologies ${nearTech.join(', ')}` : '', nearTopics.length ? `topics ${nearTopics.join(', ')}` : ''].filter(Boolean).join('; ')}. ` +
        'Ask about a decision in one of these, or use the words a developer would use for the symptom or goal.',
    );
  }
  if (topics.length > 0 || input.task_type) suggestions.push('Drop `topic` and `task_type` if the decision fits another area: they only shape ranking.');
  if (input.query.length > 300) suggestions.push('Shorten the query to the decision itself; leave out code and unrelated context.');
  suggestions.push('If the guidance should exist, call submit_feedback with category "missing".');
  return suggestions;
}
