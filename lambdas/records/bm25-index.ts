/**
 * Maintains the BM25 side tables (`record_terms`, `collection_term_stats`, `collection_stats`)
 * for a set of records, in a few set-based statements whatever the set's size.
 * Only approved records are indexed, so document frequencies, the record count and
 * the average length always describe exactly what search can return; they are kept
 * per collection (schema/012_collections.sql), and a search sums the caller's. Call it in
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

/**
 * Reindexes `recordIds`. Their collections' phrasing masses are recomputed at once,
 * unless `laterMasses` is given: the collections go into it, and the caller calls
 * `refreshPhraseMasses` with it before its transaction ends. An import does that once
 * for all its chunks: each refresh reads every phrasing of a collection, so one per
 * chunk of a 20,000-record import made its cost grow with the square of its size.
 */
export async function reindexRecords(tx: Sql, recordIds: readonly string[], laterMasses?: Set<number>): Promise<void> {
  if (recordIds.length === 0) return;
  const ids = JSON.stringify(recordIds);
  // Take the records out of their collections' statistics (nothing happens for one that was not
  // indexed); the collections they were counted in come back, for the phrasing masses below.
  const [out] = await tx.query<{ collections: number[] | null }>(
    `WITH old AS (DELETE FROM record_terms WHERE record_id = ANY (${IDS}) RETURNING record_id, collection_id, lexeme, doc_len),
          per_term AS (SELECT lexeme, collection_id, count(*) AS n FROM old GROUP BY lexeme, collection_id),
          dec AS (UPDATE collection_term_stats t SET df = t.df - p.n FROM per_term p
                   WHERE t.lexeme = p.lexeme AND t.collection_id = p.collection_id RETURNING 1),
          docs AS (SELECT collection_id, count(*) AS n, sum(dl) AS len
                     FROM (SELECT record_id, collection_id, max(doc_len) AS dl FROM old GROUP BY record_id, collection_id) d
                    GROUP BY collection_id),
          stats AS (UPDATE collection_stats c SET n = c.n - docs.n, total_len = c.total_len - docs.len
                      FROM docs WHERE c.collection_id = docs.collection_id RETURNING 1)
     SELECT coalesce(jsonb_agg(collection_id), '[]'::jsonb) AS collections FROM docs`,
    [ids],
    { json: ['collections'] },
  );
  // record_phrasings and record_phrase_terms (schema/005_asked_as_and_relevance.sql).
  await tx.query(`SELECT chatctx_index_phrasings(${IDS})`, [ids]);
  // Lexemes whose df fell to 0 keep their row: a zero df reads exactly like an absent
  // one, and sweeping them would scan the whole table on every change.
  // Put back the approved ones, each in its record's collection.
  const [back] = await tx.query<{ collections: number[] | null }>(
    `WITH fields AS (
            SELECT r.id AS record_id, r.collection_id, u.lexeme, (SELECT sum(${WEIGHT_SQL}) FROM unnest(u.weights) w) AS tf
              FROM records r, unnest(r.search_vector) u
             WHERE r.id = ANY (${IDS}) AND r.status = 'approved'
            UNION ALL
            SELECT r.id, r.collection_id, u.lexeme, ${FIELD_WEIGHTS.asked} * cardinality(u.positions)
              FROM records r, unnest(r.asked_vector) u
             WHERE r.id = ANY (${IDS}) AND r.status = 'approved'),
          terms AS (SELECT record_id, collection_id, lexeme, sum(tf) AS tf FROM fields GROUP BY record_id, collection_id, lexeme),
          lens AS (SELECT record_id, collection_id, sum(tf) AS dl FROM terms GROUP BY record_id, collection_id),
          ins AS (INSERT INTO record_terms (lexeme, record_id, collection_id, tf, doc_len)
                  SELECT t.lexeme, t.record_id, t.collection_id, t.tf, l.dl FROM terms t JOIN lens l USING (record_id, collection_id)
                   ORDER BY t.lexeme, t.record_id RETURNING lexeme, collection_id),
          inc AS (INSERT INTO collection_term_stats (lexeme, collection_id, df) SELECT lexeme, collection_id, count(*) FROM ins GROUP BY lexeme, collection_id
                  ON CONFLICT (lexeme, collection_id) DO UPDATE SET df = collection_term_stats.df + excluded.df RETURNING 1),
          docs AS (SELECT collection_id, count(*) AS n, sum(dl) AS len FROM lens GROUP BY collection_id),
          stats AS (INSERT INTO collection_stats (collection_id, n, total_len) SELECT collection_id, n, len FROM docs
                    ON CONFLICT (collection_id) DO UPDATE SET n = collection_stats.n + excluded.n, total_len = collection_stats.total_len + excluded.total_len
                    RETURNING 1)
     SELECT coalesce(jsonb_agg(collection_id), '[]'::jsonb) AS collections FROM docs`,
    [ids],
    { json: ['collections'] },
  );
  // n and df moved in those collections, so every phrasing's IDF mass there did: recomputed for
  // each of their records (one statement; thousands of records take a moment, and this is owner
  // work, not a search). A collection untouched keeps its masses.
  const touched = new Set([...(out?.collections ?? []), ...(back?.collections ?? [])]);
  if (laterMasses) touched.forEach((collection) => laterMasses.add(collection));
  else await refreshPhraseMasses(tx, touched);
}

/** Recomputes the phrasing masses of every approved record in `collections` (schema/012_collections.sql). */
export async function refreshPhraseMasses(tx: Sql, collections: ReadonlySet<number>): Promise<void> {
  if (collections.size === 0) return;
  await tx.query('SELECT chatctx_refresh_phrase_masses(ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::int))', [JSON.stringify([...collections])]);
}
