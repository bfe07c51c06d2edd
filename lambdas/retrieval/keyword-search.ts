/**
 * Keyword retrieval: Okapi BM25 over the records' weighted tsvectors, computed in
 * SQL with OR semantics (any query lexeme can match).
 *
 * Postgres' own `ts_rank` has no inverse document frequency and `plainto_tsquery`
 * demands every word, so neither ranks free-text decisions well. Here each query
 * lexeme is weighted by its IDF over approved records, term frequency is weighted
 * by field (title > summary/recommendation > rationale > conditions/pitfalls), and
 * document length is normalised. Statistics are computed per query from the live
 * tsvectors, so they are always current.
 */
import type { Sql } from '../ports/sql.ts';

/** BM25 parameters: the usual short-document setting (Anserini uses k1 0.9, b 0.4). */
const K1 = 0.9;
const B = 0.4;

/**
 * Weight of a query word no record contains, in the query's IDF mass. Such a word
 * (a project's own identifier, a typo, or an off-corpus topic) should lower
 * coverage, but not as much as a rare word the corpus does know.
 */
const ABSENT_TERM_WEIGHT = 0.5;

/** Field weights by tsvector label: A title, B summary + recommendation, C rationale, D lists. */
const FIELD_WEIGHT_SQL = `CASE w WHEN 'A' THEN 2.5 WHEN 'B' THEN 1.5 WHEN 'C' THEN 1.0 ELSE 0.6 END`;

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
  /** Records that matched at least one lexeme (before any limit). */
  readonly totalCandidates: number;
  readonly queryLexemes: number;
}

export interface KeywordSearchOptions {
  /** Canonical technology names; when set, only records that apply to one of them. */
  readonly technologies?: readonly string[];
  readonly limit: number;
}

export async function keywordSearch(sql: Sql, query: string, options: KeywordSearchOptions): Promise<KeywordSearchResult> {
  const techFilter = options.technologies && options.technologies.length > 0 ? JSON.stringify(options.technologies) : null;
  const rows = await sql.query<{ id: string | null; score: number; matched_idf: number; query_idf: number; candidates: number; lexemes: number }>(
    `WITH q AS (
       SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', $1)) u
     ),
     docs AS (
       SELECT r.id, r.search_vector AS v FROM records r
        WHERE r.status = 'approved'
          AND ($2::jsonb IS NULL OR EXISTS (
                SELECT 1 FROM record_applies_to a
                 WHERE a.record_id = r.id
                   AND lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($2::jsonb) t)))
     ),
     terms AS (
       SELECT d.id, u.lexeme, (SELECT sum(${FIELD_WEIGHT_SQL}) FROM unnest(u.weights) w) AS tf
         FROM docs d, unnest(d.v) u
     ),
     lens AS (SELECT id, sum(tf) AS dl FROM terms GROUP BY id),
     corpus AS (SELECT count(*)::float8 AS n, coalesce(avg(dl), 1)::float8 AS avgdl FROM lens),
     matched AS (SELECT t.id, t.lexeme, t.tf FROM terms t JOIN q USING (lexeme)),
     idf AS (
       SELECT q.lexeme, count(m.id) AS df, ln(1 + (c.n - count(m.id) + 0.5) / (count(m.id) + 0.5)) AS idf
         FROM q CROSS JOIN corpus c LEFT JOIN matched m USING (lexeme)
        GROUP BY q.lexeme, c.n
     ),
     scored AS (
       SELECT m.id,
              sum(i.idf * m.tf * ${K1 + 1} / (m.tf + ${K1} * (1 - ${B} + ${B} * l.dl / c.avgdl))) AS score,
              sum(i.idf) AS matched_idf
         FROM matched m JOIN idf i USING (lexeme) JOIN lens l USING (id) CROSS JOIN corpus c
        GROUP BY m.id
     ),
     totals AS (
       SELECT (SELECT coalesce(sum(CASE WHEN df = 0 THEN ${ABSENT_TERM_WEIGHT} * idf ELSE idf END), 0) FROM idf) AS query_idf,
              (SELECT count(*) FROM scored) AS candidates,
              (SELECT count(*) FROM q) AS lexemes
     )
     SELECT s.id::text AS id, s.score, s.matched_idf, t.query_idf, t.candidates::int AS candidates, t.lexemes::int AS lexemes
       FROM totals t LEFT JOIN LATERAL (
         SELECT * FROM scored ORDER BY score DESC, id LIMIT $3
       ) s ON true`,
    [query, techFilter, options.limit],
  );
  const first = rows[0];
  return {
    hits: rows
      .filter((r) => r.id !== null)
      .map((r) => ({ id: r.id as string, score: Number(r.score), matchedIdf: Number(r.matched_idf) })),
    queryIdf: Number(first?.query_idf ?? 0),
    totalCandidates: Number(first?.candidates ?? 0),
    queryLexemes: Number(first?.lexemes ?? 0),
  };
}
