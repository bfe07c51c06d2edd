/**
 * Dense retrieval over `record_passages` with pgvector's HNSW index (cosine).
 * A record's similarity is its best passage's. HNSW returns at most `ef_search`
 * rows (40 by default), so it is raised to the number of passages requested for
 * this statement only (`set_config(..., true)` inside a transaction).
 */
import type { Sql } from '../ports/sql.ts';
import { vectorLiteral } from '../embeddings/vector-codec.ts';
import { technologyCondition, technologyParam, type CandidateFilter } from './keyword-search.ts';

export interface VectorHit {
  readonly id: string;
  /** Cosine similarity of the best passage, -1..1. */
  readonly similarity: number;
}

export async function vectorSearch(sql: Sql, vector: Float32Array, filter: CandidateFilter, limit: number): Promise<VectorHit[]> {
  // More passages than records: several passages of one record can fill the top.
  const passages = Math.max(40, limit * 2);
  return sql.transaction(async (tx) => {
    await tx.query(`SELECT set_config('hnsw.ef_search', $1, true)`, [String(passages)]);
    const rows = await tx.query<{ id: string; similarity: number }>(
      `WITH nearest AS (
         SELECT p.record_id, 1 - (p.embedding <=> $1::vector) AS similarity
           FROM record_passages p
          ORDER BY p.embedding <=> $1::vector
          LIMIT $3)
       SELECT n.record_id::text AS id, max(n.similarity) AS similarity
         FROM nearest n JOIN records r ON r.id = n.record_id
        WHERE r.status = 'approved' AND ${technologyCondition('n.record_id', 2)}
        GROUP BY n.record_id
        ORDER BY similarity DESC, id
        LIMIT $4`,
      [vectorLiteral(vector), technologyParam(filter), passages, limit],
    );
    return rows.map((r) => ({ id: r.id, similarity: Number(r.similarity) }));
  });
}

/** Exact best-passage similarity for given records (to score keyword-only candidates). */
export async function similarities(sql: Sql, vector: Float32Array, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.query<{ id: string; similarity: number }>(
    `SELECT p.record_id::text AS id, max(1 - (p.embedding <=> $1::vector)) AS similarity
       FROM record_passages p
      WHERE p.record_id IN (SELECT jsonb_array_elements_text($2::jsonb)::uuid)
      GROUP BY p.record_id`,
    [vectorLiteral(vector), JSON.stringify(ids)],
  );
  return new Map(rows.map((r) => [r.id, Number(r.similarity)]));
}
