/**
 * Maintains the BM25 side tables (`record_terms`, `term_stats`, `corpus_stats`)
 * for one record. Only approved records are indexed, so document frequencies,
 * the record count and the average length always describe exactly what search
 * can return. Call it in the same transaction as any change to a record's text
 * or status; it is idempotent.
 *
 * Term frequencies are field-weighted from the record's tsvector labels, a
 * simplified BM25F: a word in the title counts more than one in the rationale.
 */
import type { Sql } from '../ports/sql.ts';

/** Weight of one occurrence by tsvector label: A title, B summary + recommendation, C rationale, D lists. */
export const FIELD_WEIGHTS = { A: 2.0, B: 1.0, C: 1.0, D: 0.5 } as const;

const WEIGHT_SQL = `CASE w WHEN 'A' THEN ${FIELD_WEIGHTS.A} WHEN 'B' THEN ${FIELD_WEIGHTS.B} WHEN 'C' THEN ${FIELD_WEIGHTS.C} ELSE ${FIELD_WEIGHTS.D} END`;

export async function reindexRecord(tx: Sql, recordId: string): Promise<void> {
  // Take the record out of the statistics (a no-op when it was not indexed).
  await tx.query(
    `WITH old AS (DELETE FROM record_terms WHERE record_id = $1::uuid RETURNING lexeme, doc_len),
          dec AS (UPDATE term_stats t SET df = t.df - 1 FROM old WHERE t.lexeme = old.lexeme RETURNING 1)
     UPDATE corpus_stats
        SET n = n - (SELECT CASE WHEN count(*) > 0 THEN 1 ELSE 0 END FROM old),
            total_len = total_len - coalesce((SELECT max(doc_len) FROM old), 0)
      WHERE id = 1`,
    [recordId],
  );
  // Lexemes whose df fell to 0 keep their row: a zero df reads exactly like an absent
  // one, and sweeping them would scan the whole table on every record change.
  // Put it back if it is approved.
  await tx.query(
    `WITH terms AS (
            SELECT u.lexeme, (SELECT sum(${WEIGHT_SQL}) FROM unnest(u.weights) w) AS tf
              FROM records r, unnest(r.search_vector) u
             WHERE r.id = $1::uuid AND r.status = 'approved'),
          len AS (SELECT coalesce(sum(tf), 0) AS dl FROM terms),
          ins AS (INSERT INTO record_terms (lexeme, record_id, tf, doc_len)
                  SELECT lexeme, $1::uuid, tf, (SELECT dl FROM len) FROM terms RETURNING lexeme),
          inc AS (INSERT INTO term_stats (lexeme, df) SELECT lexeme, 1 FROM ins
                  ON CONFLICT (lexeme) DO UPDATE SET df = term_stats.df + 1 RETURNING 1)
     UPDATE corpus_stats
        SET n = n + (SELECT CASE WHEN count(*) > 0 THEN 1 ELSE 0 END FROM terms),
            total_len = total_len + (SELECT dl FROM len)
      WHERE id = 1`,
    [recordId],
  );
}
