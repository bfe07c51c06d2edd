-- Keyword search that reads fewer postings on a larger store, with the same answers.
--
-- 012's statement scored every record holding any word of the question: every posting
-- of every query word read, weighed and summed. On PGlite that costs about 5
-- microseconds a posting, four times the cost of reading it, and a question over
-- SciFact's 5,183 documents reads about 3,400 postings, over 20,000 about 18,000.
--
-- Now (a MaxScore bound, in one statement): a word cannot add more than
-- weight * idf * (k1 + 1) to a record's score. A first bar comes from the postings of
-- the rarest words. The commonest words whose bounds together stay under it cannot lift
-- a record holding only them into the top, so their postings are not read; records
-- holding another word are scored on those words, and the few that could still reach
-- the top look the common words up by (lexeme, record). The top p_limit records, their
-- scores, matched words and phrasing shares are exactly 012's (the tests compare them
-- to the last bit, test/integration/keyword-pruning.test.ts).
--
-- What changes is `candidates` (total_candidates in answers): on a pruned question it
-- counts the records holding at least one of the words that were read, not every
-- record holding any word of the question. A question whose words have at most
-- chatctx.keyword_prune_postings postings in the caller's collections (8,000 unless
-- the database sets it; anything but a whole number is ignored) is not pruned: every
-- record holding one of its words is scored and counted by 012's statement, as before.
-- On the starter corpus (124 records) only a question of about a hundred common words gets there.
--
-- Nothing is stored for it: the bounds come from collection_term_stats, which 012
-- keeps, so imports and the schema are unchanged.
CREATE OR REPLACE FUNCTION chatctx_keyword_search(
  p_query text, p_groups jsonb, p_technologies jsonb, p_collections integer[], p_limit int, p_k1 float8, p_b float8)
RETURNS TABLE (id text, score float8, detail jsonb)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
  prune_setting constant text := current_setting('chatctx.keyword_prune_postings', true);
  prune_above constant bigint := CASE WHEN prune_setting ~ '^[0-9]{1,12}$' THEN prune_setting::bigint ELSE 8000 END;
  lexemes text[];
  postings bigint;
  -- The question's words (their lexemes in $8), their weights and statistics (012's).
  head constant text := $h$
  WITH q AS (SELECT l.lexeme FROM unnest($8::text[]) AS l(lexeme)),
       g AS (SELECT (t.ord - 1)::int AS i, coalesce((t.item ->> 'weight')::float8, 1) AS weight,
                    ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', coalesce(t.item ->> 'text', ''))) u ORDER BY u.lexeme) AS lexemes
               FROM jsonb_array_elements(coalesce($2, '[]'::jsonb)) WITH ORDINALITY AS t(item, ord)),
       gw AS (SELECT l AS lexeme, min(g.weight) AS weight FROM g, unnest(g.lexemes) AS l GROUP BY l),
       s AS (SELECT coalesce(sum(c.n), 0)::float8 AS n,
                    CASE WHEN coalesce(sum(c.n), 0) > 0 THEN sum(c.total_len) / sum(c.n) ELSE 1 END AS avgdl
               FROM collection_stats c WHERE c.collection_id = ANY ($7)),
       -- Document frequency per collection, for the phrasing shares, and summed over the caller's.
       qc AS (SELECT q.lexeme, t.collection_id, t.df FROM q JOIN collection_term_stats t ON t.lexeme = q.lexeme AND t.collection_id = ANY ($7)),
       qt AS (SELECT q.lexeme, coalesce((SELECT sum(qc.df) FROM qc WHERE qc.lexeme = q.lexeme), 0) AS df, coalesce(gw.weight, 1) AS weight
                FROM q LEFT JOIN gw USING (lexeme)),
       qi AS (SELECT qt.lexeme, qt.df, qt.weight, ln(1 + (s.n - qt.df + 0.5) / (qt.df + 0.5)) AS idf FROM qt CROSS JOIN s),
  $h$;
  -- 012's: every record holding a word of the question is scored and counted.
  every_record constant text := $e$
       scored AS (
         SELECT rt.record_id, min(rt.collection_id) AS collection_id,
                sum(qi.weight * qi.idf * rt.tf * ($5 + 1) / (rt.tf + $5 * (1 - $6 + $6 * rt.doc_len / s.avgdl))) AS score,
                array_agg(qi.lexeme ORDER BY qi.lexeme) AS matched
           FROM qi CROSS JOIN s
                CROSS JOIN LATERAL (SELECT r.record_id, r.collection_id, r.tf, r.doc_len FROM record_terms r
                                     WHERE r.lexeme = qi.lexeme AND r.collection_id = ANY ($7) OFFSET 0) rt
          WHERE $3 IS NULL OR rt.record_id IN (
                  SELECT a.record_id FROM record_applies_to a
                   WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($3) t))
          GROUP BY rt.record_id
         HAVING bool_or(qi.weight > 0)),
       counted AS (SELECT count(*) AS n FROM scored),
  $e$;
  -- 015's: the commonest words' postings skipped (above).
  pruned constant text := $p$
       -- The most a record can gain from each word: BM25's term-frequency factor stays below k1 + 1.
       qb AS (SELECT qi.lexeme, qi.df, qi.weight, qi.idf, greatest(qi.weight, 0) * qi.idf * ($5 + 1) AS ub FROM qi WHERE qi.df > 0),
       -- A first bar, from the rarest words' postings (until about twice $4 of them are read):
       -- $4 records score at least the $4-th best of their partial scores there. The rows are
       -- kept (sp) and not read again below.
       seed AS (SELECT x.lexeme FROM (SELECT qb.lexeme, sum(qb.df) OVER (ORDER BY qb.df, qb.lexeme ROWS UNBOUNDED PRECEDING) - qb.df AS before FROM qb WHERE qb.weight > 0) x
                 WHERE x.before < 2 * $4),
       sp AS MATERIALIZED (SELECT rt.record_id, rt.collection_id, qb.lexeme, qb.weight, qb.weight * qb.idf * rt.tf * ($5 + 1) / (rt.tf + $5 * (1 - $6 + $6 * rt.doc_len / s.avgdl)) AS part
                    FROM qb JOIN seed USING (lexeme) CROSS JOIN s
                         CROSS JOIN LATERAL (SELECT r.record_id, r.collection_id, r.tf, r.doc_len FROM record_terms r WHERE r.lexeme = qb.lexeme AND r.collection_id = ANY ($7) OFFSET 0) rt
                   WHERE ($3 IS NULL OR rt.record_id IN (SELECT a.record_id FROM record_applies_to a WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($3) t)))),
       seeded AS (SELECT sp.record_id, sum(sp.part) AS partial FROM sp GROUP BY sp.record_id),
       bar0 AS (SELECT coalesce((SELECT sd.partial FROM seeded sd ORDER BY sd.partial DESC OFFSET $4 - 1 LIMIT 1), 0) AS v),
       -- The commonest words whose bounds together stay under the bar ("lesser"): a record
       -- holding only those scores less than $4 others, so their postings are not read.
       -- Every record holding another word ("essential") gets a partial score; only records
       -- whose partial score plus the lesser words' bounds reaches the $4-th best partial
       -- score can be in the top (kept), and only those look the lesser words up, one
       -- (lexeme, record) probe each. Their scores are summed in lexeme order, as every
       -- posting used to be, so they are the same to the last bit.
       lesser AS MATERIALIZED (SELECT x.lexeme, x.weight, x.idf FROM (SELECT qb.*, sum(qb.ub) OVER (ORDER BY qb.ub, qb.lexeme ROWS UNBOUNDED PRECEDING) AS upto FROM qb) x, bar0 WHERE x.upto < bar0.v),
       lesser_ub AS (SELECT coalesce(sum(qb.ub), 0) AS v FROM qb JOIN lesser USING (lexeme)),
       essential AS (SELECT qb.* FROM qb WHERE qb.lexeme NOT IN (SELECT lesser.lexeme FROM lesser)),
       ep AS MATERIALIZED (SELECT sp.* FROM sp WHERE sp.lexeme IN (SELECT essential.lexeme FROM essential)
              UNION ALL
              SELECT rt.record_id, rt.collection_id, qb.lexeme, qb.weight, qb.weight * qb.idf * rt.tf * ($5 + 1) / (rt.tf + $5 * (1 - $6 + $6 * rt.doc_len / s.avgdl)) AS part
              FROM essential qb CROSS JOIN s
                   CROSS JOIN LATERAL (SELECT r.record_id, r.collection_id, r.tf, r.doc_len FROM record_terms r WHERE r.lexeme = qb.lexeme AND r.collection_id = ANY ($7) OFFSET 0) rt
             WHERE qb.lexeme NOT IN (SELECT seed.lexeme FROM seed) AND ($3 IS NULL OR rt.record_id IN (SELECT a.record_id FROM record_applies_to a WHERE lower(a.name) IN (SELECT lower(t) FROM jsonb_array_elements_text($3) t)))),
       pd AS MATERIALIZED (SELECT ep.record_id, sum(ep.part) AS partial FROM ep GROUP BY ep.record_id HAVING bool_or(ep.weight > 0)),
       bar AS (SELECT coalesce((SELECT pd.partial FROM pd ORDER BY pd.partial DESC OFFSET $4 - 1 LIMIT 1), 0) AS v),
       kept AS MATERIALIZED (SELECT pd.record_id FROM pd, bar, lesser_ub WHERE pd.partial + lesser_ub.v >= bar.v),
       probed AS (SELECT kept.record_id, rt.collection_id, l.lexeme, l.weight, l.weight * l.idf * rt.tf * ($5 + 1) / (rt.tf + $5 * (1 - $6 + $6 * rt.doc_len / s.avgdl)) AS part
                    FROM kept CROSS JOIN lesser l CROSS JOIN s
                         CROSS JOIN LATERAL (SELECT r.collection_id, r.tf, r.doc_len FROM record_terms r WHERE r.lexeme = l.lexeme AND r.record_id = kept.record_id AND r.collection_id = ANY ($7)) rt),
       parts AS (SELECT ep.record_id, ep.collection_id, ep.lexeme, ep.weight, ep.part FROM ep JOIN kept USING (record_id)
                 UNION ALL SELECT * FROM probed),
       scored AS (
         SELECT p.record_id, min(p.collection_id) AS collection_id, sum(p.part ORDER BY p.lexeme) AS score,
                array_agg(p.lexeme ORDER BY p.lexeme) AS matched
           FROM parts p
          GROUP BY p.record_id
         HAVING bool_or(p.weight > 0)),
       counted AS (SELECT count(*) AS n FROM pd),
  $p$;
  -- The top records, their phrasing shares and the statistics row (012's).
  tail constant text := $t$
       top AS (SELECT sc.record_id, sc.collection_id, sc.score, sc.matched FROM scored sc ORDER BY sc.score DESC, sc.record_id LIMIT $4),
       own AS (SELECT qc.lexeme, qc.collection_id, ln(1 + (coalesce(c.n, 0) - qc.df + 0.5) / (qc.df + 0.5)) AS idf
                 FROM qc LEFT JOIN collection_stats c ON c.collection_id = qc.collection_id),
       -- Driven by the few records of `top`, each phrasing looked up by (lexeme, record)
       -- (record_phrase_terms_lexeme_idx): a lexeme's whole posting list holds every
       -- collection's phrasings, and a guest beside 2,000 internal records read thirty
       -- times as many rows as a store of public records alone (bin/bench/collections.ts).
       -- Materialized: computed first (a few rows per top record), so the masses are looked up
       -- for those rows only; inlined, the planner sometimes joined record_phrase_mass first and
       -- looked up thirty times as many (a guest beside 2,000 internal records, 2.3 times as slow).
       said AS MATERIALIZED (SELECT top.record_id, p.phrase, sum(own.idf) AS idf
                  FROM top JOIN own ON own.collection_id = top.collection_id
                       CROSS JOIN LATERAL (SELECT x.phrase FROM record_phrase_terms x
                                            WHERE x.lexeme = own.lexeme AND x.record_id = top.record_id OFFSET 0) p
                 GROUP BY top.record_id, p.phrase),
       -- Materialized too: inlined, the planner sometimes ran it again for each of the top records.
       phrase AS MATERIALIZED (
         SELECT said.record_id, max(said.idf / nullif(m.mass, 0)) AS share
           FROM said JOIN record_phrase_mass m ON m.record_id = said.record_id AND m.phrase = said.phrase
          GROUP BY said.record_id)
  SELECT top.record_id::text, top.score::float8,
         jsonb_build_object(
           'matched', to_jsonb(top.matched),
           'phrase', coalesce(ph.share, 0))
    FROM top LEFT JOIN phrase ph ON ph.record_id = top.record_id
  UNION ALL
  SELECT NULL::text, NULL::float8, jsonb_build_object(
           'lexemes', (SELECT coalesce(jsonb_agg(jsonb_build_array(qi.lexeme, qi.idf, qi.df) ORDER BY qi.lexeme), '[]'::jsonb) FROM qi),
           'groups', (SELECT coalesce(jsonb_agg(to_jsonb(g.lexemes) ORDER BY g.i), '[]'::jsonb) FROM g),
           'candidates', (SELECT counted.n FROM counted),
           'n', (SELECT s.n FROM s))
  $t$;
BEGIN
  -- Both statements are planned for each call, with the question's own values, as 012's
  -- was, and planning the larger one costs about as much as it saves until a question's
  -- words have several thousand postings. Measured per question, SciFact questions over
  -- 5,183 and over 20,000 documents (bench:keyword-scale's stores): up to 6,000 postings
  -- the pruned statement took 1.01 to 1.5 times as long as 012's, 0.95 from 6,000 to
  -- 8,000, 0.88 from 8,000 to 12,000 and 0.66 to 0.68 beyond; on the starter corpus 1.4
  -- times as long. Hence the default of 8,000. The question is stemmed once, here.
  lexemes := ARRAY(SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', p_query)) u);
  SELECT coalesce(sum(t.df), 0) INTO postings FROM collection_term_stats t WHERE t.lexeme = ANY (lexemes) AND t.collection_id = ANY (p_collections);
  -- The bound needs every word's gain to be at least 0: a negative weight scores in full.
  IF postings > prune_above
     AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(p_groups, '[]'::jsonb)) g WHERE (g ->> 'weight')::float8 < 0) THEN
    RETURN QUERY EXECUTE head || pruned || tail USING p_query, p_groups, p_technologies, p_limit, p_k1, p_b, p_collections, lexemes;
  ELSE
    RETURN QUERY EXECUTE head || every_record || tail USING p_query, p_groups, p_technologies, p_limit, p_k1, p_b, p_collections, lexemes;
  END IF;
END
$fn$;
