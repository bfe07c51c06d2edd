/**
 * The approved records most like a candidate, for the `duplicates` and
 * `conflicts` gates. Similarity is measured with the retrieval engine's own
 * keyword machinery: the same Postgres `english` analyzer (stemming, stop words)
 * over the same fields the engine weights highest (title, summary and
 * recommendation: the A and B weights of `records.search_vector`), and the same
 * inverse document frequencies (`term_stats`, `corpus_stats`) BM25 ranks with.
 * Each side is a vector of (1 + ln tf) × idf over its lexemes; the similarity is
 * their cosine, 1 for the same text and near 0 for unrelated ones. Symmetric, so a
 * long record does not "contain" a short candidate the way a search match would.
 *
 * One statement per batch of candidates, so an import of thousands of records
 * costs a few statements, not one per record.
 */
import type { Sql } from '../ports/sql.ts';
import type { RecordFile } from './record-schema.ts';
import type { Neighbour } from './quality-gates.ts';

/** Neighbours reported per candidate: enough to name every likely duplicate or conflict. */
const PER_CANDIDATE = 5;
/** Below this nothing is worth comparing. */
const FLOOR = 0.15;
const BATCH = 100;

/** The text a record is compared on (the fields of the A and B weights). */
export function comparedText(record: Pick<RecordFile, 'title' | 'summary' | 'recommendation'>): string {
  return [record.title, record.summary ?? '', record.recommendation].join('\n');
}

const SIMILAR = `
WITH stats AS (SELECT greatest(n, 1) AS n FROM corpus_stats WHERE id = 1),
cand AS (
  SELECT (t.ord - 1)::int AS i, t.item ->> 'slug' AS slug, u.lexeme, 1 + ln(coalesce(array_length(u.positions, 1), 1)) AS tf
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(item, ord),
         unnest(to_tsvector('english', t.item ->> 'text')) AS u
),
rec AS (
  SELECT r.id, u.lexeme, 1 + ln(c.cnt) AS tf
    FROM records r, unnest(r.search_vector) AS u,
         LATERAL (SELECT count(*) AS cnt FROM unnest(u.weights) w WHERE w IN ('A', 'B')) c
   WHERE r.status = 'approved' AND c.cnt > 0
),
idf AS (
  SELECT l.lexeme, ln(1 + (s.n - coalesce(ts.df, 0) + 0.5) / (coalesce(ts.df, 0) + 0.5)) AS w
    FROM (SELECT DISTINCT lexeme FROM cand UNION SELECT DISTINCT lexeme FROM rec) l
    CROSS JOIN stats s LEFT JOIN term_stats ts ON ts.lexeme = l.lexeme
),
cand_norm AS (SELECT c.i, sqrt(sum((c.tf * d.w) ^ 2)) AS norm FROM cand c JOIN idf d USING (lexeme) GROUP BY c.i),
rec_norm AS (SELECT r.id, sqrt(sum((r.tf * d.w) ^ 2)) AS norm FROM rec r JOIN idf d USING (lexeme) GROUP BY r.id),
dot AS (
  SELECT c.i, r.id, sum(c.tf * r.tf * d.w * d.w) AS dot
    FROM cand c JOIN rec r USING (lexeme) JOIN idf d USING (lexeme) GROUP BY c.i, r.id
),
scored AS (
  SELECT d.i, d.id, d.dot / nullif(cn.norm * rn.norm, 0) AS similarity,
         row_number() OVER (PARTITION BY d.i ORDER BY d.dot / nullif(cn.norm * rn.norm, 0) DESC) AS rank
    FROM dot d JOIN cand_norm cn USING (i) JOIN rec_norm rn USING (id)
    JOIN records r ON r.id = d.id
    JOIN (SELECT DISTINCT i, slug FROM cand) cs USING (i)
   WHERE r.slug <> cs.slug
)
SELECT s.i, r.id::text AS id, r.slug, r.title, r.topic, r.recommendation, s.similarity,
       (SELECT coalesce(jsonb_agg(a.name ORDER BY a.position), '[]'::jsonb) FROM record_applies_to a WHERE a.record_id = r.id) AS technologies
  FROM scored s JOIN records r ON r.id = s.id
 WHERE s.rank <= ${PER_CANDIDATE} AND s.similarity >= ${FLOOR}
 ORDER BY s.i, s.similarity DESC`;

/**
 * For each record, the approved records (other than one with its own slug, which
 * is its current version) most similar to it, best first.
 */
export async function similarApprovedRecords(sql: Sql, records: readonly RecordFile[]): Promise<Neighbour[][]> {
  const out: Neighbour[][] = records.map(() => []);
  for (let start = 0; start < records.length; start += BATCH) {
    const batch = records.slice(start, start + BATCH);
    const rows = await sql.query<Neighbour & { i: number }>(SIMILAR, [JSON.stringify(batch.map((r) => ({ text: comparedText(r), slug: r.slug })))], {
      json: ['technologies'],
    });
    for (const { i, ...row } of rows) out[start + i]!.push({ ...row, similarity: Number(row.similarity) });
  }
  return out;
}
