/**
 * `search_knowledge`: retrieval, applicability, the relevance profile (or, where a
 * deployment has one, the reranker: reranking.ts), answer shaping and the
 * privacy-preserving search event.
 *
 * This module does not validate arguments (the tool does) and never logs or
 * stores the query text: only its salted hash reaches `search_events`.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Logger } from '../ports/logger.ts';
import type { Reranker } from '../ports/reranker.ts';
import { settingDefault } from '../config/settings.ts';
import { hashQuery, hashSearchInput } from '../privacy/hashing.ts';
import type { SearchKnowledgeInput, SearchKnowledgeOutput } from '../../schema/tools.ts';
import { approvedCoverage, loadApprovedByIds, type StoredRecord } from '../records/record-read.ts';
import { shapeRecord, withEvidenceStanding } from '../records/record-shape.ts';
import { effectiveSynonyms, type SynonymList } from '../records/query-synonyms.ts';
import { fitToBudget } from './token-budget.ts';
import { cachedQueryEmbedding, embedNewQuery } from './query-embedding.ts';
import { rankCandidates, type RankResult } from './rank.ts';
import type { ResidentKeywordIndex } from './resident-keyword-index.ts';
import { JUDGED_CANDIDATES, type RelevanceProfile } from './relevance.ts';
import { loadProfiles, profileFor, type RelevanceProfiles } from './relevance-profiles.ts';
import { judgeCandidates, searchContext, selectResults, topicsOf, type SearchContext } from './selection.ts';
import { rerankedSelection, type RerankStep } from './reranking.ts';
import { noMatchSuggestions } from './no-match.ts';
import type { SearchCache } from './search-cache.ts';
import { DirectSearchEvents, type SearchEventSink } from './search-events.ts';
import { GUEST_SCOPE, collectionsKey, type CallerScope } from '../auth/caller-scope.ts';

export interface SearchDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  /** Undefined when no embedding provider is configured. */
  readonly embedder?: Embedder;
  readonly logger: Logger;
  /** Time allowed for the query embedding on a cache miss. @default 1500 */
  readonly embedTimeoutMs?: number;
  /** Answers, records, synonyms and profiles kept between calls; without it every call reads them. */
  readonly cache?: SearchCache;
  /** Where search events go. @default written at once, one per search */
  readonly events?: SearchEventSink;
  /** Overrides the profile the store and the encoder would choose (evaluation only). */
  readonly relevance?: RelevanceProfile;
  /** Show a record whose evidence drifted with its confidence one step lower. @default false */
  readonly driftDemotesConfidence?: boolean;
  /** Reorders and admits the best candidates (reranking.ts); without it the relevance profile alone decides. */
  readonly reranker?: Reranker;
  /** Time allowed for the reranker. @default the `rerankTimeoutMs` setting's default */
  readonly rerankTimeoutMs?: number;
  /** How many of the best-ranked candidates go to the reranker. @default the `rerankCandidates` setting's default */
  readonly rerankCandidates?: number;
  /** The keyword side from memory, for the generations it holds a copy of (the local server). @default the store's statement */
  readonly keywordIndex?: ResidentKeywordIndex;
  /** Told what an answer was chosen from (an owner's `records.search` explains it); never the query. */
  readonly trace?: (trace: SearchTrace) => void;
}

/** What an answer was chosen from: the ranking, the records read, the request's context and the profile that judged them. */
export interface SearchTrace {
  readonly ranking: RankResult;
  readonly records: ReadonlyMap<string, StoredRecord>;
  readonly context: SearchContext;
  readonly profile: RelevanceProfile;
  /** Whether a reranker chose the results (the profile's selection did not). */
  readonly reranked: boolean;
}

/** How many candidates each retrieval side contributes. */
export const CANDIDATE_POOL = 50;

/** Candidates below the threshold whose technologies and topics a `no_match` names as the closest coverage. */
const NEAR_CANDIDATES = 3;

/**
 * Answers one search as `scope` sees the store: only its collections are searched, counted and
 * suggested from, and a kept answer is kept per set of collections, so an answer computed for a
 * wider scope is never served to a narrower one.
 */
export async function searchKnowledge(deps: SearchDeps, input: SearchKnowledgeInput, scope: CallerScope = GUEST_SCOPE): Promise<SearchKnowledgeOutput> {
  const pepper = await deps.secrets.pepper();
  const generation = await deps.cache?.current(deps.sql);
  // The models that shape an answer key it (the encoder's, and the reranker's when there is one), and the collections searched.
  const models = [deps.embedder?.model ?? 'none', ...(deps.reranker ? [deps.reranker.model] : [])].join('+');
  const key = generation === undefined ? undefined : hashSearchInput(pepper, `${models}\u0000collections:${collectionsKey(scope)}`, input);
  const kept = key === undefined ? undefined : deps.cache!.answer(generation!, key);
  // A repeated question gets the answer it got in this corpus generation, and runs no encoder.
  const output: SearchKnowledgeOutput = kept
    ? { ...kept, retrieval: { ...kept.retrieval, embedding_cache: kept.retrieval.embedding_cache ? 'hit' : undefined } }
    : await answer(deps, input, generation, scope);
  // Degraded answers are not kept, so a recovered embedder or reranker is used at once.
  if (!kept && key !== undefined && !output.retrieval.degraded) deps.cache!.keepAnswer(generation!, key, output);

  const topics = topicsOf(input);
  await (deps.events ?? new DirectSearchEvents(deps.sql, deps.logger)).record({
    query_hash: hashQuery(pepper, input.query),
    topics,
    technologies: input.technologies,
    mode: output.retrieval.mode,
    result_count: output.results.length,
    degraded: output.retrieval.degraded,
    result_ids: output.results.map((r) => r.id),
    collections: scope.collections,
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

const SETTINGS_KEY = 'search settings';

/** The synonyms and relevance profiles of this corpus generation (one read per generation, or per search without a cache). */
async function searchSettings(deps: SearchDeps, generation: number | undefined): Promise<{ synonyms: SynonymList; profiles: RelevanceProfiles }> {
  const load = async () => ({ synonyms: await effectiveSynonyms(deps.sql), profiles: await loadProfiles(deps.sql) });
  return generation === undefined ? load() : deps.cache!.perGeneration(SETTINGS_KEY, generation, load);
}

const COVERAGE_KEY = 'coverage';

/** What the caller's collections cover, which a no_match answer lists (one read per generation and set of collections, or per answer without a cache). */
function corpusCoverage(deps: SearchDeps, generation: number | undefined, scope: CallerScope) {
  const read = () => approvedCoverage(deps.sql, scope.collections);
  return generation === undefined ? read() : deps.cache!.perGeneration(`${COVERAGE_KEY} ${collectionsKey(scope)}`, generation, read);
}

/** Retrieval, applicability, the relevance profile and shaping: the answer itself. */
async function answer(deps: SearchDeps, input: SearchKnowledgeInput, generation: number | undefined, scope: CallerScope): Promise<SearchKnowledgeOutput> {
  const { synonyms, profiles } = await searchSettings(deps, generation);
  // Optimistically by cache key: one statement when the embedding is cached, the encoder and a second one when not.
  let embedding = await cachedQueryEmbedding(deps, input.query);
  const snapshot = generation === undefined ? undefined : deps.keywordIndex?.forGeneration(generation);
  const resident = snapshot && deps.keywordIndex ? { index: deps.keywordIndex, snapshot } : undefined;
  const options = { mode: 'hybrid' as const, filter: { collections: scope.collections }, pool: CANDIDATE_POOL, synonyms, resident };
  let ranking = await rankCandidates(deps.sql, input.query, embedding.vector, options);
  if (ranking.vectorMissing) {
    embedding = await embedNewQuery(deps, input.query, embedding.vector?.cacheKey);
    ranking = await rankCandidates(deps.sql, input.query, embedding.vector, options);
  }
  // Requested and named technologies raise the records that declare them; they filter nothing out, so a
  // PostgreSQL record still answers a Node.js question about slow pagination (below an equally
  // relevant Node.js one).
  // A candidate without a similarity has no passages yet (a first start still embedding, a record
  // imported a moment ago): an encoder's profile would read that as "unlike the question", so the
  // query is judged by the keyword profile until the store is embedded.
  const judged = ranking.candidates.slice(0, JUDGED_CANDIDATES);
  const embeddedThroughout = judged.every((c) => c.similarity !== undefined);
  const profile = deps.relevance ?? profileFor(profiles, deps.embedder, embedding.vector !== undefined && embeddedThroughout);
  const context = searchContext(input, ranking.analysis);
  const rerank = rerankStep(deps);
  const readDepth = Math.max(JUDGED_CANDIDATES, rerank?.candidates ?? 0);
  const records = await readRecords(deps, generation, ranking.candidates.slice(0, readDepth).map((c) => c.id));
  // With a reranker its results answer; when it was not needed or failed, the profile's do.
  const reranked = rerank ? await rerankedSelection(rerank, deps.logger, input, ranking, records, profile) : undefined;
  const top = reranked && 'results' in reranked ? reranked.results : selectResults(ranking, records, input, profile);
  deps.trace?.({ ranking, records, context, profile, reranked: reranked !== undefined && 'results' in reranked });
  const degradedReasons = [embedding.degradedReason, reranked && 'degradedReason' in reranked ? reranked.degradedReason : undefined].filter((r) => r !== undefined);
  const mode = top.length === 0 ? 'no_match' : embedding.vector ? 'hybrid' : 'keyword_fallback';
  // The technologies asked for or named were dropped to answer: nothing shown declares any of them.
  const technologyFilterFallback = context.technologies.length > 0 && top.length > 0 && !top.some((r) => r.technologyMatch);
  const base: SearchKnowledgeOutput = {
    query_summary: querySummary(context.topics, context.technologies, input.task_type),
    results: [],
    retrieval: {
      mode,
      degraded: degradedReasons.length > 0,
      degraded_reason: degradedReasons.length > 0 ? degradedReasons.join(' ') : undefined,
      embedding_provider: deps.embedder?.provider,
      embedding_cache: embedding.cache,
      total_candidates: ranking.totalCandidates,
      technology_filter_fallback: technologyFilterFallback,
      truncated: false,
    },
    suggestions:
      mode === 'no_match'
        ? noMatchSuggestions({
            input,
            context,
            ranking,
            judged: judgeCandidates(ranking, records, context, profile),
            threshold: profile.threshold,
            near: ranking.candidates.slice(0, NEAR_CANDIDATES).flatMap((c) => records.get(c.id) ?? []),
            coverage: await corpusCoverage(deps, generation, scope),
          })
        : [],
  };
  return fitToBudget(
    base,
    top.map((r) => ({ ...shapeRecord(withEvidenceStanding(r.record, deps.driftDemotesConfidence ?? false), input.detail), applicability_note: r.note })),
    input.token_budget,
  );
}

/** The rerank step the deps configure, with the settings' defaults; none without a reranker. */
function rerankStep(deps: SearchDeps): RerankStep | undefined {
  if (!deps.reranker) return undefined;
  return {
    reranker: deps.reranker,
    timeoutMs: deps.rerankTimeoutMs ?? settingDefault('rerankTimeoutMs'),
    candidates: deps.rerankCandidates ?? settingDefault('rerankCandidates'),
  };
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

