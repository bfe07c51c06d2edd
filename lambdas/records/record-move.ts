/**
 * Moving a record between collections: a reviewed change (who and why are kept in
 * `record_moves`, which the record's history shows), made in one transaction with
 * everything search reads: the record's collection, the collection copied onto its
 * passages and index rows, and both collections' BM25 statistics and phrasing
 * masses (`bm25-index.ts`). The corpus generation moves with it, so no answer kept
 * for either collection survives the move.
 */
import type { Sql } from '../ports/sql.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { asRecordId } from './record-identifiers.ts';
import { collectionIds } from './collections.ts';
import { reindexRecords } from './bm25-index.ts';

export interface MoveRequest {
  /** The record's slug or id (any status). */
  readonly record: string;
  /** The collection's name. */
  readonly to: string;
  readonly reviewer: string;
  readonly reason: string;
}

export interface MoveResult {
  readonly id: string;
  readonly slug: string;
  readonly from: string;
  readonly to: string;
  readonly moved_at: string;
}

export async function moveRecord(sql: Sql, request: MoveRequest): Promise<MoveResult> {
  return sql.transaction(async (tx) => {
    const to = (await collectionIds(tx, [request.to])).get(request.to)!;
    const [row] = await tx.query<{ id: string; slug: string; collection_id: number; from_name: string }>(
      `SELECT r.id::text AS id, r.slug, r.collection_id, c.name AS from_name
         FROM records r JOIN collections c ON c.id = r.collection_id
        WHERE r.slug = $1 OR r.id = $2::uuid
        FOR UPDATE OF r`,
      [request.record, asRecordId(request.record)],
    );
    if (!row) throw new NotFoundError(`No record has the slug or id ${request.record}; nothing was moved.`, { record: request.record });
    if (Number(row.collection_id) === to) {
      throw new ValidationError(`${row.slug} is already in "${request.to}"; nothing was moved.`, { record: row.slug, collection: request.to });
    }
    await tx.query('UPDATE records SET collection_id = $2 WHERE id = $1::uuid', [row.id, to]);
    await tx.query('UPDATE record_passages SET collection_id = $2 WHERE record_id = $1::uuid', [row.id, to]);
    // Out of the old collection's statistics (its index rows still name it) and into the new one's.
    await reindexRecords(tx, [row.id]);
    const [moved] = await tx.query<{ moved_at: string }>(
      'INSERT INTO record_moves (record_id, from_collection, to_collection, reviewer, reason) VALUES ($1::uuid, $2, $3, $4, $5) RETURNING moved_at',
      [row.id, row.collection_id, to, request.reviewer, request.reason],
    );
    return { id: row.id, slug: row.slug, from: row.from_name, to: request.to, moved_at: moved!.moved_at };
  });
}
