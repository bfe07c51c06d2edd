/**
 * The approved records most like a candidate, for the `duplicates` and
 * `conflicts` gates. Similarity is measured with the retrieval engine's own
 * keyword machinery: the same Postgres `english` analyzer (stemming, stop words)
 * over the same fields the engine weights highest (title, summary and
 * recommendation: the A and B weights of `records.search_vector`), and the same
 * inverse document frequencies BM25 ranks with (summed over every collection).
 * Each side is a vector of (1 + ln tf) × idf over its lexemes; the similarity is
 * their cosine, 1 for the same text and near 0 for unrelated ones. Symmetric, so a
 * long record does not "contain" a short candidate the way a search match would.
 *
 * One statement per batch of candidates, so an import of thousands of records
 * costs a few statements, not one per record; and each candidate is scored only
 * against the records that share one of its most informative words.
 */
import type { Sql } from '../ports/sql.ts';
import type { RecordFile } from './record-schema.ts';
import type { Neighbour } from './quality-gates.ts';
import { textFieldSet } from './record-identifiers.ts';

/** Neighbours reported per candidate: enough to name every likely duplicate or conflict. */
const PER_CANDIDATE = 5;
/** Below this nothing is worth comparing. */
const FLOOR = 0.15;
/** Candidates per statement: short statements, so searches on the same database are not held up for long. */
const BATCH = 25;

/** The text a record is compared on (the fields of the A and B weights). */
export function comparedText(record: Pick<RecordFile, 'title' | 'summary' | 'recommendation'>): string {
  return [record.title, record.summary ?? '', record.recommendation].join('\n');
}

/** A candidate's most informative lexemes (by tf × idf) that pick which approved records to compare it with. */
const KEY_LEXEMES = 12;
/** The records sharing most of those words, per candidate, that are scored in full. */
const PAIRS_PER_CANDIDATE = 25;

/*
 * Comparing every candidate with every approved record would cost candidates ×
 * records (a 100-record import against 2,000 records took about 20 s). Instead,
 * each candidate is compared only with the 25 records that share most of its 12
 * most informative words (the `record_terms` index finds them), then scored on all
 * words. A duplicate or a near one shares those words, so it is always among them.
 * `record_terms` holds approved records only (`bm25-index.ts`), so the records
 * sharing words are found without reading `records`; only each candidate's own
 * stored version (`own`, found by slug) is left out.
 */
const SIMILAR = `
WITH stats AS (SELECT greatest(coalesce(sum(n), 0), 1) AS n FROM collection_stats),
cand AS (
  SELECT (t.ord - 1)::int AS i, t.item ->> 'slug' AS slug, u.lexeme, 1 + ln(coalesce(array_length(u.positions, 1), 1)) AS tf
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(item, ord),
         unnest(to_tsvector('english', t.item ->> 'text')) AS u
),
cand_w AS (
  SELECT c.i, c.slug, c.lexeme, c.tf * ln(1 + (s.n - coalesce(ts.df, 0) + 0.5) / (coalesce(ts.df, 0) + 0.5)) AS w
    FROM cand c CROSS JOIN stats s LEFT JOIN LATERAL (SELECT sum(x.df) AS df FROM collection_term_stats x WHERE x.lexeme = c.lexeme) ts ON true
),
keyed AS (
  SELECT i, slug, lexeme, w FROM (SELECT i, slug, lexeme, w, row_number() OVER (PARTITION BY i ORDER BY w DESC, lexeme) AS k FROM cand_w) x
   WHERE k <= ${KEY_LEXEMES}
),
own AS (
  SELECT (t.ord - 1)::int AS i, r.id
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(item, ord) JOIN records r ON r.slug = t.item ->> 'slug'
   WHERE r.slug = ANY (${textFieldSet(1, 'slug')})
),
shared AS (
  SELECT k.i, rt.record_id AS id, sum(k.w) AS overlap
    FROM keyed k JOIN record_terms rt ON rt.lexeme = k.lexeme
   WHERE NOT EXISTS (SELECT 1 FROM own o WHERE o.i = k.i AND o.id = rt.record_id)
   GROUP BY k.i, rt.record_id
),
pairs AS (
  SELECT i, id FROM (SELECT i, id, row_number() OVER (PARTITION BY i ORDER BY overlap DESC, id) AS k FROM shared) x
   WHERE k <= ${PAIRS_PER_CANDIDATE}
),
rec AS (
  SELECT r.id, u.lexeme, 1 + ln(c.cnt) AS tf
    FROM records r, unnest(r.search_vector) AS u,
         LATERAL (SELECT count(*) AS cnt FROM unnest(u.weights) w WHERE w IN ('A', 'B')) c
   WHERE r.id = ANY (ARRAY(SELECT DISTINCT id FROM pairs)) AND c.cnt > 0
),
rec_w AS (
  SELECT r.id, r.lexeme, r.tf * ln(1 + (s.n - coalesce(ts.df, 0) + 0.5) / (coalesce(ts.df, 0) + 0.5)) AS w
    FROM rec r CROSS JOIN stats s LEFT JOIN LATERAL (SELECT sum(x.df) AS df FROM collection_term_stats x WHERE x.lexeme = r.lexeme) ts ON true
),
cand_norm AS (SELECT i, sqrt(sum(w ^ 2)) AS norm FROM cand_w GROUP BY i),
rec_norm AS (SELECT id, sqrt(sum(w ^ 2)) AS norm FROM rec_w GROUP BY id),
dot AS (
  SELECT p.i, p.id, sum(c.w * r.w) AS dot
    FROM pairs p JOIN cand_w c ON c.i = p.i JOIN rec_w r ON r.id = p.id AND r.lexeme = c.lexeme
   GROUP BY p.i, p.id
),
scored AS (
  SELECT d.i, d.id, d.dot / nullif(cn.norm * rn.norm, 0) AS similarity
    FROM dot d JOIN cand_norm cn USING (i) JOIN rec_norm rn USING (id)
),
ranked AS (SELECT *, row_number() OVER (PARTITION BY i ORDER BY similarity DESC) AS rank FROM scored)
SELECT s.i, r.id::text AS id, r.slug, r.title, r.topic, r.recommendation, s.similarity,
       (SELECT coalesce(jsonb_agg(a.name ORDER BY a.position), '[]'::jsonb) FROM record_applies_to a WHERE a.record_id = r.id) AS technologies
  FROM ranked s JOIN records r ON r.id = s.id
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

