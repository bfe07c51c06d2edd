/**
 * Maintains the BM25 side tables (`record_terms`, `term_stats`, `corpus_stats`)
 * for a set of records, in a few set-based statements whatever the set's size.
 * Only approved records are indexed, so document frequencies, the record count and
 * the average length always describe exactly what search can return. Call it in
 * the same transaction as any change to those records' text or status; it is
 * idempotent.
 *
 * Term frequencies are field-weighted from the record's tsvector labels, a
 * simplified BM25F: a word in the title counts more than one in the rationale.
 *
 * The same statements keep `record_phrasings` (each approved record's title and
 * `asked_as` phrasings, by key, which the duplicates gate looks phrasings up in) and
 * `record_phrase_terms` and `record_phrase_mass` (the same phrasings as lexemes, and
 * each one's IDF mass, which search measures how fully a question says one against).
 */
import type { Sql } from '../ports/sql.ts';
import { uuidSet } from './record-identifiers.ts';

/**
 * Weight of one occurrence by tsvector label (A title, B summary + recommendation,
 * C rationale, D lists), and of one in `asked_as` (its own tsvector, `asked_vector`).
 */
export const FIELD_WEIGHTS = { A: 2.0, B: 1.0, C: 1.0, D: 0.5, asked: 1.0 } as const;

const WEIGHT_SQL = `CASE w WHEN 'A' THEN ${FIELD_WEIGHTS.A} WHEN 'B' THEN ${FIELD_WEIGHTS.B} WHEN 'C' THEN ${FIELD_WEIGHTS.C} ELSE ${FIELD_WEIGHTS.D} END`;

/** `$1` as an array of record ids, which the record_id and primary key indexes are probed with. */
const IDS = uuidSet(1);

export async function reindexRecords(tx: Sql, recordIds: readonly string[]): Promise<void> {
  if (recordIds.length === 0) return;
  const ids = JSON.stringify(recordIds);
  // Take the records out of the statistics (nothing happens for one that was not indexed).
  await tx.query(
    `WITH old AS (DELETE FROM record_terms WHERE record_id = ANY (${IDS}) RETURNING record_id, lexeme, doc_len),
          per_term AS (SELECT lexeme, count(*) AS n FROM old GROUP BY lexeme),
          dec AS (UPDATE term_stats t SET df = t.df - p.n FROM per_term p WHERE t.lexeme = p.lexeme RETURNING 1),
          docs AS (SELECT record_id, max(doc_len) AS dl FROM old GROUP BY record_id)
     UPDATE corpus_stats
        SET n = n - (SELECT count(*) FROM docs), total_len = total_len - coalesce((SELECT sum(dl) FROM docs), 0)
      WHERE id = 1`,
    [ids],
  );
  // record_phrasings and record_phrase_terms (schema/005_asked_as_and_relevance.sql).
  await tx.query(`SELECT chatctx_index_phrasings(${IDS})`, [ids]);
  // Lexemes whose df fell to 0 keep their row: a zero df reads exactly like an absent
  // one, and sweeping them would scan the whole table on every change.
  // Put back the approved ones.
  await tx.query(
    `WITH fields AS (
            SELECT r.id AS record_id, u.lexeme, (SELECT sum(${WEIGHT_SQL}) FROM unnest(u.weights) w) AS tf
              FROM records r, unnest(r.search_vector) u
             WHERE r.id = ANY (${IDS}) AND r.status = 'approved'
            UNION ALL
            SELECT r.id, u.lexeme, ${FIELD_WEIGHTS.asked} * cardinality(u.positions)
              FROM records r, unnest(r.asked_vector) u
             WHERE r.id = ANY (${IDS}) AND r.status = 'approved'),
          terms AS (SELECT record_id, lexeme, sum(tf) AS tf FROM fields GROUP BY record_id, lexeme),
          lens AS (SELECT record_id, sum(tf) AS dl FROM terms GROUP BY record_id),
          ins AS (INSERT INTO record_terms (lexeme, record_id, tf, doc_len)
                  SELECT t.lexeme, t.record_id, t.tf, l.dl FROM terms t JOIN lens l USING (record_id)
                   ORDER BY t.lexeme, t.record_id RETURNING lexeme),
          inc AS (INSERT INTO term_stats (lexeme, df) SELECT lexeme, count(*) FROM ins GROUP BY lexeme
                  ON CONFLICT (lexeme) DO UPDATE SET df = term_stats.df + excluded.df RETURNING 1)
     UPDATE corpus_stats
        SET n = n + (SELECT count(*) FROM lens), total_len = total_len + coalesce((SELECT sum(dl) FROM lens), 0)
      WHERE id = 1`,
    [ids],
  );
  // n and df moved, so every phrasing's IDF mass did: recomputed whole (one statement; a
  // corpus of thousands of records takes a moment, and this is owner work, not a search).
  await tx.query('SELECT chatctx_refresh_phrase_masses()');
}
