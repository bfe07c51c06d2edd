/**
 * The optional rerank step of `search_knowledge` (a deployment turns it on with
 * `chatctx:reranker`): after ranking and before selection, the best candidates'
 * text goes to a cross-encoder, and its scores order and admit the results.
 *
 * Admission with a reranker takes two things: the reranker's score at or above its
 * profile's threshold, and the lexical guard, which keeps the evidence that makes a
 * `no_match` honest: the search's own relevance profile (coverage of the question's
 * subject, phrasing, margin, stack) must give the candidate at least half of what it
 * would need to be admitted without a reranker, so the reranker can promote a
 * near miss or demote a weak hit but never show a record that shares only a common
 * word with the question. Candidates below the guard are not even sent, and a search
 * where none passes it makes no call at all (no cost, no latency).
 *
 * The request's boosts (topic, task type, technologies, versions) multiply the
 * reranker's score as they multiply the fused score without one, so a record the
 * requested version excludes still sinks to the end, with its note.
 *
 * A failed or late reranker changes nothing but the answer's `degraded` flag and
 * reason: the results are those of the usual policy (`selection.ts`), and a degraded
 * answer is not kept in the answer cache, so the next search tries again.
 */
import type { SearchKnowledgeInput } from '../../schema/tools.ts';
import { errorKind } from '../observability/logger.ts';
import type { Logger } from '../ports/logger.ts';
import type { RerankOutcome, Reranker } from '../ports/reranker.ts';
import type { StoredRecord } from '../records/record-read.ts';
import type { RankResult } from './rank.ts';
import type { RelevanceProfile } from './relevance.ts';
import { cutTail, judgeCandidates, requestBoost, searchContext, type Ranked } from './selection.ts';

/**
 * How a reranker's scores admit and cut: the reranker's own relevance profile. It
 * ships uncalibrated (the evaluation calibrates the embedder profiles only), with
 * defaults chosen to be safe rather than tuned; see `rerankProfileFor`.
 */
export interface RerankProfile {
  /** `bedrock-rerank:<model>`. */
  readonly key: string;
  /** Admit a candidate whose reranker score is at least this. */
  readonly threshold: number;
  /** After the boosts, results under this share of the best are cut. */
  readonly minShareOfTop: number;
  /** The lexical guard: the share of the search profile's threshold a candidate's probability must reach. */
  readonly lexicalShare: number;
  readonly calibrated: boolean;
}

/**
 * Defaults for every Bedrock reranker. Cohere Rerank 3.5 scores in 0..1, a clear
 * answer well above 0.5 and an unrelated text near 0; 0.2 admits a partial answer
 * and refuses noise, and the lexical guard stands behind it. Amazon Rerank 1.0 gets
 * the same until someone measures it. The tail cut is looser than the fused
 * profiles' (0.85–0.9) because reranker scores fall off faster than fused ones.
 */
const RERANK_DEFAULTS = { threshold: 0.2, minShareOfTop: 0.5, lexicalShare: 0.5 } as const;

export function rerankProfileFor(reranker: Pick<Reranker, 'provider' | 'model'>): RerankProfile {
  return { key: `${reranker.provider}-rerank:${reranker.model}`, ...RERANK_DEFAULTS, calibrated: false };
}

/** What the reranker reads for a record: what an agent sees of it in a brief answer, and the stack it is for. */
export function rerankText(record: StoredRecord): string {
  const stack = record.applies_to.map((a) => a.name);
  return [record.title, record.summary ?? '', record.recommendation, stack.length > 0 ? `Applies to ${stack.join(', ')}.` : '']
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => (/[.!?:;]$/.test(part) ? part : `${part}.`))
    .join(' ');
}

export interface RerankStep {
  readonly reranker: Reranker;
  /** Milliseconds the reranker may take. */
  readonly timeoutMs: number;
  /** How many of the best-ranked candidates may be sent. */
  readonly candidates: number;
}

/** The reranked results, or why there are none: not needed (nothing passed the guard), or a failure to report. */
export type RerankedSelection = { readonly results: Ranked[] } | { readonly skipped: true } | { readonly degradedReason: string };

/** Reranks the guarded shortlist and selects from it (see the module comment). Never throws. */
export async function rerankedSelection(
  step: RerankStep,
  logger: Logger,
  input: SearchKnowledgeInput,
  ranking: Pick<RankResult, 'candidates' | 'concepts' | 'analysis'>,
  records: ReadonlyMap<string, StoredRecord>,
  lexical: RelevanceProfile,
): Promise<RerankedSelection> {
  const profile = rerankProfileFor(step.reranker);
  const context = searchContext(input, ranking.analysis);
  const shortlist = judgeCandidates(ranking, records, context, lexical, step.candidates).filter(
    (j) => j.probability >= profile.lexicalShare * lexical.threshold,
  );
  if (shortlist.length === 0) return { skipped: true };

  const outcome = await rerankWithin(step, input.query, shortlist.map((j) => rerankText(j.record)));
  if (!outcome.ok) {
    logger.warn('rerank_failed', { reranker: profile.key, failure: outcome.failure, error: outcome.error, timeout_ms: step.timeoutMs });
    return { degradedReason: degradedReason(outcome, step.timeoutMs) };
  }
  const admitted = shortlist.flatMap((j, i) => {
    const score = outcome.scores[i]!;
    if (score < profile.threshold) return [];
    const boost = requestBoost(j.record, context);
    return [{ record: j.record, boosted: score * boost.factor, note: boost.note, technologyMatch: boost.technologyMatch, probability: score }];
  });
  const results = cutTail(admitted, profile.minShareOfTop, input.max_results);
  return { results: results.map((r) => ({ record: r.record, score: r.boosted, note: r.note, technologyMatch: r.technologyMatch, probability: r.probability })) };
}

/**
 * The port's call, held to the deadline here as well: an adapter that hangs or
 * throws must not hold or fail the search.
 */
async function rerankWithin(step: RerankStep, query: string, documents: readonly string[]): Promise<RerankOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<RerankOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, failure: 'timeout' }), step.timeoutMs);
  });
  const call = (async (): Promise<RerankOutcome> => {
    try {
      const outcome = await step.reranker.rerank(query, documents, { deadlineMs: step.timeoutMs });
      if (outcome.ok && (outcome.scores.length !== documents.length || !outcome.scores.every(Number.isFinite))) {
        return { ok: false, failure: 'error', error: 'MalformedRerankScores' };
      }
      return outcome;
    } catch (error) {
      return { ok: false, failure: 'error', error: errorKind(error) };
    }
  })();
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The answer's `degraded_reason`, in the style of the embedder's: what failed, and what answered instead. */
function degradedReason(outcome: Extract<RerankOutcome, { ok: false }>, timeoutMs: number): string {
  return outcome.failure === 'timeout'
    ? `Reranking timed out after ${timeoutMs} ms; the results are ranked without the reranker.`
    : `The reranker failed (${outcome.error ?? 'Error'}); the results are ranked without the reranker.`;
}
