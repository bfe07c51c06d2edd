/**
 * Candidate ranking: BM25 and vector retrieval, fused. This is the one function
 * both `search_knowledge` and the evaluation harness call, so the quality we
 * measure is the quality agents get. It ranks; it does not apply the relevance
 * threshold, applicability or answer shaping (see `search-service.ts`).
 *
 * Fusion is a weighted sum of normalized scores, chosen by measurement on
 * SciFact (docs/quality.md, "Retrieval quality"): BM25 divided by the query's best BM25
 * score, cosine min-max normalized over the candidates, dense weight
 * `DENSE_WEIGHT`. Reciprocal-rank fusion was measured and rejected: it gives a
 * weak encoder's ranks the same say as BM25's and lost 0.2 nDCG@10.
 */
import type { Sql } from '../ports/sql.ts';
import type { SynonymList } from '../records/query-synonyms.ts';
import { searchCandidates, type CandidateFilter, type CandidateOptions, type QueryVector } from './candidate-search.ts';
import { analyseQuery, type QueryAnalysis } from './query-analysis.ts';
import { matchEvidence, queryConcepts, type QueryConcepts } from './coverage.ts';

export type { QueryVector };

export type RankMode = 'hybrid' | 'keyword' | 'vector';

/** Share of the fused score given to the dense side (tuned on the SciFact tune half). */
export const DENSE_WEIGHT = 0.3;

export interface RankedCandidate {
  readonly id: string;
  /** Fused score in 0..1 (hybrid), BM25 (keyword) or cosine (vector). */
  readonly score: number;
  readonly bm25: number;
  /** Share of the question's subject this record contains, 0..1 (coverage.ts; 0 when only the dense side found it). */
  readonly coverage: number;
  /** The same, over the words some record contains. */
  readonly knownCoverage: number;
  /** Subject concepts matched, over the question's. */
  readonly matchedShare: number;
  /** The rarest subject word matched, 0..1 (coverage.ts). */
  readonly specificity: number;
  /** How fully the query says one of the record's phrasings (its title or an asked_as item), 0..1. */
  readonly phraseCoverage: number;
  /** Best-passage cosine similarity, when a query vector was available. */
  readonly similarity?: number;
}

export interface RankResult {
  /** The vector was a cache key the cache does not hold: nothing was ranked (see candidate-search.ts). */
  readonly vectorMissing?: boolean;
  readonly candidates: RankedCandidate[];
  /** Distinct records either side retrieved before the pool limit. */
  readonly totalCandidates: number;
  /** The question's stack, codes and synonyms (query-analysis.ts). */
  readonly analysis: QueryAnalysis;
  /** The question's concepts, as coverage was measured on them. */
  readonly concepts: QueryConcepts;
}

export interface RankOptions {
  readonly mode: RankMode;
  readonly filter: CandidateFilter;
  /** How many candidates each side contributes (and the most returned). */
  readonly pool: number;
  /** Overrides DENSE_WEIGHT (evaluation sweeps only). */
  readonly denseWeight?: number;
  /** Overrides the weight of query words no record contains (evaluation sweeps only). */
  readonly absentWeight?: number;
  /** Applied to the query (records/query-synonyms.ts). @default none */
  readonly synonyms?: SynonymList;
  /** The keyword side from memory (candidate-search.ts). @default the store's statement */
  readonly resident?: CandidateOptions['resident'];
}

export async function rankCandidates(sql: Sql, query: string, vector: QueryVector | undefined, options: RankOptions): Promise<RankResult> {
  const mode = vector ? options.mode : 'keyword';
  const analysis = analyseQuery(query, options.synonyms);
  const found = await searchCandidates(sql, { text: analysis.searchText, groups: analysis.groups }, vector, {
    filter: options.filter,
    pool: options.pool,
    keyword: mode !== 'vector',
    resident: options.resident,
  });
  const concepts = queryConcepts(found.terms, analysis.groups, options.absentWeight);
  const base = { analysis, concepts };
  if (found.vectorMissing) return { vectorMissing: true, candidates: [], totalCandidates: 0, ...base };
  if (mode === 'vector') {
    return {
      candidates: found.dense.map((h) => ({ id: h.id, score: h.similarity, bm25: 0, coverage: 0, knownCoverage: 0, matchedShare: 0, specificity: 0, phraseCoverage: 0, similarity: h.similarity })),
      totalCandidates: found.dense.length,
      ...base,
    };
  }

  const keyword = found.keyword;
  const evidence = new Map(keyword.map((h) => [h.id, { ...matchEvidence(concepts, new Set(h.matched)), phraseCoverage: h.phrase }]));
  const lexicalOf = (id: string) => evidence.get(id) ?? { coverage: 0, knownCoverage: 0, matchedShare: 0, specificity: 0, phraseCoverage: 0 };
  if (mode === 'keyword') {
    return {
      candidates: keyword.map((h) => ({ id: h.id, score: h.score, bm25: h.score, ...lexicalOf(h.id) })),
      totalCandidates: found.keywordCandidates,
      ...base,
    };
  }

  const dense = found.dense;
  const byId = new Map(keyword.map((h) => [h.id, h]));
  const ids = [...new Set([...keyword.map((h) => h.id), ...dense.map((h) => h.id)])];
  // Similarity for every candidate: the dense side's, and the keyword hits' it missed.
  const sims = new Map(found.similarities);
  for (const h of dense) sims.set(h.id, h.similarity);

  const bestBm25 = keyword[0]?.score ?? 0;
  const simValues = ids.map((id) => sims.get(id)).filter((v): v is number => v !== undefined);
  const lo = Math.min(...simValues);
  const hi = Math.max(...simValues);
  const weight = options.denseWeight ?? DENSE_WEIGHT;
  const candidates = ids.map((id) => {
    const bm25 = byId.get(id)?.score ?? 0;
    const similarity = sims.get(id);
    const lexical = bestBm25 > 0 ? bm25 / bestBm25 : 0;
    const semantic = similarity === undefined || hi <= lo ? 0 : (similarity - lo) / (hi - lo);
    return { id, score: (1 - weight) * lexical + weight * semantic, bm25, ...lexicalOf(id), similarity };
  });
  candidates.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  const denseOnly = dense.filter((h) => !byId.has(h.id)).length;
  return { candidates: candidates.slice(0, options.pool), totalCandidates: found.keywordCandidates + denseOnly, ...base };
}
