/**
 * Keyword retrieval: Okapi BM25 computed in SQL from the side tables that
 * `bm25-index.ts` maintains, with OR semantics (any query word can match).
 *
 * Postgres' own `ts_rank` has no inverse document frequency, and `plainto_tsquery`
 * demands every word, so neither ranks free-text decisions well (measured on
 * SciFact: ts_rank 0.57, AND-query 0.07 nDCG@10, against 0.68 for BM25). The
 * query is analysed with the same `english` configuration as the records.
 */
import type { Sql } from '../ports/sql.ts';

/** BM25 parameters: Anserini's defaults for BEIR (k1 0.9, b 0.4). */
export const BM25_K1 = 0.9;
export const BM25_B = 0.4;

/**
 * Weight of a query word no record contains, in the query's IDF mass. Such a word
 * (a project's own identifier, a typo, or an off-corpus topic) should lower
 * coverage, but not as much as a rare word the corpus does know.
 */
const ABSENT_TERM_WEIGHT = 0.5;

export interface KeywordHit {
  readonly id: string;
  readonly score: number;
  /** IDF mass of the query lexemes this record contains. */
  readonly matchedIdf: number;
}

export interface KeywordSearchResult {
  readonly hits: KeywordHit[];
  /** IDF mass of every query lexeme; lexemes no record contains count at ABSENT_TERM_WEIGHT. */
  readonly queryIdf: number;
  /** Records that matched at least one lexeme (before the limit). */
  readonly totalCandidates: number;
}

export interface CandidateFilter {
  /** Canonical technology names; when set, only records that apply to one of them. */
  readonly technologies?: readonly string[];
}

/** SQL condition restricting `<column>` (a record id) to the technology filter in parameter `$<n>`. */
export function technologyCondition(column: string, param: number): string {
  return `($${param}::jsonb IS NULL OR ${column} IN (
            SELECT a.record_id FROM record_applies_to a
             WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($${param}::jsonb) t)))`;
}

export function technologyParam(filter: CandidateFilter): string | null {
  return filter.technologies && filter.technologies.length > 0 ? JSON.stringify(filter.technologies) : null;
}

export async function keywordSearch(sql: Sql, query: string, filter: CandidateFilter, limit: number): Promise<KeywordSearchResult> {
  const rows = await sql.query<{ id: string | null; score: number; matched_idf: number; query_idf: number; candidates: number }>(
    `WITH q AS (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', $1)) u),
          s AS (SELECT n::float8 AS n, CASE WHEN n > 0 THEN total_len / n ELSE 1 END AS avgdl FROM corpus_stats WHERE id = 1),
          qt AS (SELECT q.lexeme, coalesce(t.df, 0) AS df,
                        ln(1 + (s.n - coalesce(t.df, 0) + 0.5) / (coalesce(t.df, 0) + 0.5)) AS idf
                   FROM q CROSS JOIN s LEFT JOIN term_stats t USING (lexeme)),
          -- One index range scan of record_terms per query lexeme. OFFSET 0 keeps the
          -- planner from flattening this into a hash join over the whole table, which it
          -- picks whenever statistics are stale (PGlite never auto-analyzes).
          scored AS (
            SELECT rt.record_id,
                   sum(qt.idf * rt.tf * ${BM25_K1 + 1} / (rt.tf + ${BM25_K1} * (1 - ${BM25_B} + ${BM25_B} * rt.doc_len / s.avgdl))) AS score,
                   sum(qt.idf) AS matched_idf
              FROM qt CROSS JOIN s
                   CROSS JOIN LATERAL (SELECT r.record_id, r.tf, r.doc_len FROM record_terms r WHERE r.lexeme = qt.lexeme OFFSET 0) rt
             WHERE ${technologyCondition('rt.record_id', 2)}
             GROUP BY rt.record_id),
          top AS (SELECT record_id, score, matched_idf, count(*) OVER () AS candidates FROM scored ORDER BY score DESC, record_id LIMIT $3)
     SELECT top.record_id::text AS id, top.score, top.matched_idf, top.candidates::int AS candidates,
            (SELECT coalesce(sum(CASE WHEN df = 0 THEN ${ABSENT_TERM_WEIGHT} * idf ELSE idf END), 0) FROM qt) AS query_idf
       FROM (SELECT 1) one LEFT JOIN top ON true`,
    [query, technologyParam(filter), limit],
  );
  const first = rows[0];
  return {
    hits: rows
      .filter((r) => r.id !== null)
      .map((r) => ({ id: r.id as string, score: Number(r.score), matchedIdf: Number(r.matched_idf) })),
    queryIdf: Number(first?.query_idf ?? 0),
    totalCandidates: Number(first?.candidates ?? 0),
  };
}
