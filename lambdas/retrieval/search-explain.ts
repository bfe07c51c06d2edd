/**
 * An owner's search (`records.search`): the answer an agent's `search_knowledge`
 * would get, by the same path (`searchKnowledge`), and why each judged candidate
 * was shown or cut. The reasons come from the selection's own steps, replayed on
 * what the search traced (`SearchTrace`): the profile's admission
 * (`admitCandidates`), the weak-tail cut and `max_results` (`cutTail`), then the
 * token budget (what was selected but is not in the answer).
 *
 * Not an agent's search: no answer cache, no search event, no quota (the quota
 * is the MCP endpoint's, which an owner's command never passes), no log line. The
 * question is used to search and is neither logged nor stored; its embedding lands
 * in the embedding cache under its keyed hash, as a search's does.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Logger } from '../ports/logger.ts';
import { ValidationError } from '../errors/app-error.ts';
import { GUEST_SCOPE, type CallerScope } from '../auth/caller-scope.ts';
import { searchKnowledgeInput, type SearchKnowledgeInput, type SearchKnowledgeOutput } from '../../schema/tools.ts';
import type { ProfileName } from './relevance.ts';
import { searchKnowledge, type SearchTrace } from './search-service.ts';
import type { SearchEventSink } from './search-events.ts';
import { admitCandidates, cutTail, scoreCandidates } from './selection.ts';

/** Why a judged candidate is not in the answer. */
export const CUT_REASONS = {
  threshold: 'below the relevance threshold',
  tail: 'weaker than the best result (the weak-tail cut)',
  maxResults: 'beyond max_results',
  versionLast: 'version outside its range, so ranked last; beyond max_results',
  budget: 'over the token budget',
  reranker: 'not chosen by the reranker',
} as const;

export interface ExplainedCandidate {
  id: string;
  slug: string;
  title: string;
  /** The fused retrieval score (BM25 and vector). */
  score: number;
  /** The score times the request's topic, task, technology and version boosts: the order results are shown in. */
  boosted: number;
  /** The relevance profile's probability that the record answers the question. */
  probability: number;
  outcome: 'shown' | 'cut';
  /** Set when cut: one of `CUT_REASONS`' values. */
  reason?: string;
  /** The applicability note when a requested version is outside the record's range. */
  note?: string;
}

export interface SearchExplanation {
  mode: SearchKnowledgeOutput['retrieval']['mode'];
  total_candidates: number;
  /** The relevance profile that judged the candidates, and its cut-offs. */
  profile: { name: ProfileName; threshold: number; min_share_of_top: number; calibrated: boolean };
  /** The judged candidates: those shown in the answer's order, then those cut by boosted score. */
  candidates: ExplainedCandidate[];
}

/** `records.search`: exactly what `search_knowledge` returns to an agent, and the explanation. */
export interface OwnerSearchResult {
  result: SearchKnowledgeOutput;
  explain: SearchExplanation;
}

export interface OwnerSearchDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  readonly embedder?: Embedder;
}

const NO_EVENTS: SearchEventSink = { record: async () => {} };
const SILENT: Logger = { info() {}, warn() {}, error() {} };

/**
 * `scope` is the collections searched, as a caller scoped to them would search
 * them (the admin operation defaults it to every collection: an owner sees all).
 * @default the guest's scope
 */
export async function ownerSearch(deps: OwnerSearchDeps, args: unknown, scope: CallerScope = GUEST_SCOPE): Promise<OwnerSearchResult> {
  const parsed = searchKnowledgeInput.safeParse(args ?? {});
  if (!parsed.success) {
    throw new ValidationError('Invalid search_knowledge arguments.', {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  let trace: SearchTrace | undefined;
  const result = await searchKnowledge(
    { sql: deps.sql, secrets: deps.secrets, embedder: deps.embedder, logger: SILENT, events: NO_EVENTS, trace: (t) => (trace = t) },
    parsed.data,
    scope,
  );
  return { result, explain: explainAnswer(trace!, parsed.data, result) };
}

/** Why each judged candidate of a traced search is, or is not, in its answer. */
export function explainAnswer(trace: SearchTrace, input: SearchKnowledgeInput, result: SearchKnowledgeOutput): SearchExplanation {
  const { profile } = trace;
  const judged = admitCandidates(scoreCandidates(trace.ranking, trace.records, trace.context), profile);
  const admitted = judged.filter((j) => j.admitted);
  const kept = new Set(cutTail(admitted, profile.minShareOfTop, Number.MAX_SAFE_INTEGER));
  const selected = new Set(cutTail(admitted, profile.minShareOfTop, input.max_results));
  const order = new Map(result.results.map((r, i) => [r.id, i]));
  const scores = new Map(trace.ranking.candidates.map((c) => [c.id, c.score]));
  const reasonFor = (j: (typeof judged)[number]): string | undefined => {
    if (order.has(j.record.id)) return undefined;
    if (trace.reranked) return CUT_REASONS.reranker;
    if (!j.admitted) return CUT_REASONS.threshold;
    if (!kept.has(j)) return CUT_REASONS.tail;
    if (!selected.has(j)) return j.note ? CUT_REASONS.versionLast : CUT_REASONS.maxResults;
    return CUT_REASONS.budget;
  };
  const candidates = judged.map((j): ExplainedCandidate => {
    const reason = reasonFor(j);
    return {
      id: j.record.id,
      slug: j.record.slug,
      title: j.record.title,
      score: scores.get(j.record.id) ?? 0,
      boosted: j.boosted,
      probability: j.probability,
      outcome: reason === undefined ? 'shown' : 'cut',
      ...(reason === undefined ? {} : { reason }),
      ...(j.note ? { note: j.note } : {}),
    };
  });
  const rank = (c: ExplainedCandidate) => order.get(c.id) ?? Number.MAX_SAFE_INTEGER;
  candidates.sort((a, b) => rank(a) - rank(b) || b.boosted - a.boosted);
  return {
    mode: result.retrieval.mode,
    total_candidates: result.retrieval.total_candidates,
    profile: { name: profile.profile, threshold: profile.threshold, min_share_of_top: profile.minShareOfTop, calibrated: profile.calibrated },
    candidates,
  };
}
