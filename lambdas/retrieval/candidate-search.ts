/**
 * Candidate retrieval for one query among the caller's collections, in one statement
 * (`chatctx_candidates`, schema/012_collections.sql; the collections filter the rows
 * each side reads and the statistics BM25 uses, so nothing outside them can move a
 * score, a count or the pool):
 *
 * - Keyword: Okapi BM25 computed in SQL from the side tables `records/bm25-index.ts`
 *   maintains, with OR semantics (any query word can match). Postgres' own
 *   `ts_rank` has no inverse document frequency, and `plainto_tsquery` demands
 *   every word, so neither ranks free-text decisions well (measured on SciFact:
 *   ts_rank 0.57, AND-query 0.07 nDCG@10, against 0.68 for BM25). The query is
 *   analysed with the same `english` configuration as the records; the groups of
 *   `query-analysis.ts` weight their words, and each hit reports which query
 *   lexemes it contains, so that `coverage.ts` can judge the match.
 * - Dense: the nearest passages (cosine, pgvector) among the caller's collections'
 *   `record_passages`; a record's similarity is its best passage's. Through an HNSW
 *   index: the store's, or for a guest the public collection's own. An exact scan on
 *   a store of 150 passages or fewer, and for a key that sees some collections but not
 *   all, up to 3,000 visible passages, because an approximate walk through a graph of
 *   every collection's passages finds other visible ones depending on the invisible
 *   ones beside them (schema/013_vector_index_at_every_size.sql).
 * - The best-passage similarity of keyword hits the nearest-neighbour pool missed,
 *   so that they can be fused too.
 *
 * The query vector goes in as a `QueryVector`: read from `embedding_cache` by its
 * key (a repeated question; nothing re-sent, and no separate cache lookup), or given
 * as a literal, which is stored under its key in the same statement (a newly
 * embedded question). Postgres parses a 512-dimension literal in about 1.5 ms on
 * PGlite, so it is parsed once. A key the cache does not hold comes back as
 * `vectorMissing`, with nothing searched: the caller embeds the query and asks again.
 */
import type { Sql } from '../ports/sql.ts';
import type { QueryGroup } from './query-analysis.ts';
import { PUBLIC_COLLECTION_ID } from '../auth/caller-scope.ts';
import type { KeywordSnapshot } from './keyword-snapshot.ts';
import type { ResidentKeywordIndex } from './resident-keyword-index.ts';

/** BM25 parameters: Anserini's defaults for BEIR (k1 0.9, b 0.4). */
export const BM25_K1 = 0.9;
export const BM25_B = 0.4;

/** A query's embedding: by its cache key, as a literal, or a literal to store under a key. */
export type QueryVector = { readonly cacheKey: string; readonly literal?: string } | { readonly literal: string; readonly cacheKey?: undefined };

export interface CandidateFilter {
  /** Canonical technology names; when set, only records that apply to one of them. */
  readonly technologies?: readonly string[];
  /**
   * The caller's collection ids: every candidate, every statistic (BM25's N, document
   * frequencies, average length) and every count comes from them alone, inside the
   * statement. @default public only
   */
  readonly collections?: readonly number[];
}

export interface KeywordHit {
  readonly id: string;
  readonly score: number;
  /** The query lexemes this record contains. */
  readonly matched: readonly string[];
  /** The largest share of one of its phrasings (title, an asked_as item) the query contains, by IDF mass. */
  readonly phrase: number;
}

export interface VectorHit {
  readonly id: string;
  /** Cosine similarity of the best passage, -1..1. */
  readonly similarity: number;
}

/** The query as the index sees it: each lexeme's IDF and document frequency, and each group's lexemes. */
export interface QueryTerms {
  readonly lexemes: ReadonlyMap<string, { readonly idf: number; readonly df: number }>;
  /** `groups[i]`: the lexemes of the i-th group given to the search. */
  readonly groups: readonly (readonly string[])[];
  /** Approved records the index holds. */
  readonly records: number;
}

export interface Candidates {
  /** The vector was named by a cache key the cache does not hold: nothing was searched. */
  readonly vectorMissing: boolean;
  readonly keyword: readonly KeywordHit[];
  readonly terms: QueryTerms;
  /** Records that matched at least one lexeme (before the limit). */
  readonly keywordCandidates: number;
  readonly dense: readonly VectorHit[];
  /** Best-passage similarity of keyword hits not among `dense`, when there was a vector. */
  readonly similarities: ReadonlyMap<string, number>;
}

export interface CandidateOptions {
  readonly filter: CandidateFilter;
  /** How many records each side contributes. */
  readonly pool: number;
  /** Whether to run the keyword side (the dense-only evaluation mode does not). */
  readonly keyword: boolean;
  /**
   * The keyword side from memory (the local server's `ResidentKeywordIndex`, its snapshot of
   * the generation the search read): the same records and scores, and the statement then runs
   * only the dense side. Without it the store's statement runs both.
   */
  readonly resident?: { readonly index: ResidentKeywordIndex; readonly snapshot: KeywordSnapshot };
}

/** The text the keyword side searches and the weighted groups of it (query-analysis.ts). */
export interface KeywordQuery {
  readonly text: string;
  readonly groups: readonly QueryGroup[];
}

interface Row {
  kind: 'keyword' | 'terms' | 'dense' | 'similarity' | 'no_vector';
  id: string | null;
  score: number | null;
  detail: unknown;
}

interface TermsDetail {
  lexemes: [string, number, number][];
  groups: string[][];
  candidates: number;
  n: number;
}

const NO_TERMS: QueryTerms = { lexemes: new Map(), groups: [], records: 0 };

/** The fewest nearest passages the dense side reads (see `searchCandidates`). */
const DENSE_PASSAGES = 40;

/** The nearest passages the dense side reads; several can be one record's. */
function densePassages(options: CandidateOptions): number {
  // Beside keyword search every keyword hit gets its exact similarity anyway, so the dense side
  // only adds records the words missed: 40 answered the guidance tune halves exactly as 100 did
  // (20 lost a few), at a quarter of the statement's cost on the starter corpus's 1,458
  // passages. Alone, it must fill the pool itself.
  return options.keyword ? Math.max(DENSE_PASSAGES, Math.ceil(options.pool * 0.8)) : Math.max(DENSE_PASSAGES, options.pool * 2);
}

export async function searchCandidates(sql: Sql, query: KeywordQuery, vector: QueryVector | undefined, options: CandidateOptions): Promise<Candidates> {
  if (options.resident) return searchWithResidentKeywords(sql, query, vector, options, options.resident);
  const technologies = options.filter.technologies;
  const passages = densePassages(options);
  const rows = await sql.query<Row>(
    `SELECT * FROM chatctx_candidates($1, $2::jsonb, $3::vector, $4, $5::jsonb, ARRAY(SELECT jsonb_array_elements_text($11::jsonb)::int),
                                      $6::int, $7::int, $8::float8, $9::float8, $10::boolean)`,
    [
      query.text,
      JSON.stringify(query.groups.map((g) => ({ text: g.text, weight: g.weight }))),
      vector?.literal ?? null,
      vector?.cacheKey ?? null,
      technologies && technologies.length > 0 ? JSON.stringify(technologies) : null,
      options.pool,
      passages,
      BM25_K1,
      BM25_B,
      options.keyword,
      JSON.stringify(options.filter.collections ?? [PUBLIC_COLLECTION_ID]),
    ],
    { json: ['detail'] },
  );
  const keyword: KeywordHit[] = [];
  const dense: VectorHit[] = [];
  const similarities = new Map<string, number>();
  let terms = NO_TERMS;
  let keywordCandidates = 0;
  let vectorMissing = false;
  for (const row of rows) {
    if (row.kind === 'no_vector') vectorMissing = true;
    else if (row.kind === 'terms') {
      const detail = row.detail as TermsDetail;
      terms = {
        lexemes: new Map(detail.lexemes.map(([lexeme, idf, df]) => [lexeme, { idf: Number(idf), df: Number(df) }])),
        groups: detail.groups,
        records: Number(detail.n),
      };
      keywordCandidates = Number(detail.candidates);
    } else if (row.kind === 'keyword') {
      const detail = row.detail as { matched: string[]; phrase: number };
      keyword.push({ id: row.id!, score: Number(row.score), matched: detail.matched, phrase: Number(detail.phrase) });
    }
    else if (row.kind === 'dense') dense.push({ id: row.id!, similarity: Number(row.score) });
    else similarities.set(row.id!, Number(row.score));
  }
  return sorted({ vectorMissing, keyword, terms, keywordCandidates, dense, similarities });
}

/** UNION ALL keeps each side's order in practice, not by promise: restore it. */
function sorted(c: Candidates & { keyword: KeywordHit[]; dense: VectorHit[] }): Candidates {
  c.keyword.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  c.dense.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1));
  return c;
}

/** The keyword side scored in memory, then the dense side (residentDense). */
async function searchWithResidentKeywords(
  sql: Sql, query: KeywordQuery, vector: QueryVector | undefined, options: CandidateOptions, resident: NonNullable<CandidateOptions['resident']>,
): Promise<Candidates> {
  const technologies = options.filter.technologies && options.filter.technologies.length > 0 ? options.filter.technologies : undefined;
  const collections = options.filter.collections ?? [PUBLIC_COLLECTION_ID];
  const found = options.keyword
    ? resident.snapshot.search(await resident.index.query(query.text, query.groups), { collections, technologies, limit: options.pool, k1: BM25_K1, b: BM25_B })
    : undefined;
  const keyword: KeywordHit[] = [...(found?.hits ?? [])];
  const terms: QueryTerms = found
    ? { lexemes: new Map(found.lexemes.map(([lexeme, idf, df]) => [lexeme, { idf, df }])), groups: found.groups, records: found.n }
    : NO_TERMS;
  const { dense, similarities, vectorMissing } = vector
    ? await residentDense(sql, vector, keyword, options, resident, { technologies, collections })
    : { dense: [], similarities: new Map<string, number>(), vectorMissing: false };
  if (vectorMissing) return { vectorMissing, keyword: [], terms, keywordCandidates: 0, dense: [], similarities: new Map() };
  return sorted({ vectorMissing, keyword, terms, keywordCandidates: found?.candidates ?? 0, dense, similarities });
}

/**
 * The dense side beside a keyword side from memory: from the snapshot's passage vectors
 * when it holds them (passage-snapshot.ts; no statement for a question whose vector is
 * kept in memory), else one statement for the nearest passages and the keyword hits'
 * similarities.
 */
async function residentDense(
  sql: Sql, vector: QueryVector, keyword: readonly KeywordHit[], options: CandidateOptions, resident: NonNullable<CandidateOptions['resident']>,
  filter: { technologies: readonly string[] | undefined; collections: readonly number[] },
): Promise<{ dense: VectorHit[]; similarities: Map<string, number>; vectorMissing: boolean }> {
  const passages = resident.snapshot.passages;
  if (passages) {
    const values = await resident.index.queryVector(vector);
    if (!values) return { dense: [], similarities: new Map(), vectorMissing: true };
    // A vector of another size is the statement's to refuse, as it always was.
    if (passages.passages === 0 || values.length === passages.data.dimensions) {
      const found = passages.search(values, { ...filter, passages: densePassages(options), pool: options.pool, keywordIds: keyword.map((k) => k.id) });
      return { ...found, vectorMissing: false };
    }
  }
  const dense: VectorHit[] = [];
  const similarities = new Map<string, number>();
  let vectorMissing = false;
  const rows = await sql.query<{ kind: 'dense' | 'similarity' | 'no_vector'; id: string | null; score: number | null }>(
    `SELECT * FROM chatctx_dense_candidates($1::vector, $2, $3::jsonb, ARRAY(SELECT jsonb_array_elements_text($4::jsonb)::int), $5::int, $6::int, $7::jsonb)`,
    [
      vector.literal ?? null, vector.cacheKey ?? null, filter.technologies ? JSON.stringify(filter.technologies) : null, JSON.stringify(filter.collections),
      options.pool, densePassages(options), JSON.stringify(keyword.map((k) => k.id)),
    ],
  );
  for (const row of rows) {
    if (row.kind === 'no_vector') vectorMissing = true;
    else if (row.kind === 'dense') dense.push({ id: row.id!, similarity: Number(row.score) });
    else similarities.set(row.id!, Number(row.score));
  }
  return { dense, similarities, vectorMissing };
}
