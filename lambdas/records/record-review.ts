/**
 * Owner review of records already in the store: list them by status, approve
 * candidates (publish, keep the version in history), deprecate (withdraw from
 * search and get_guidance). Every status change also updates the BM25 statistics in
 * the same transaction. Editing text is the import's job, not this module's.
 */
import type { Sql } from '../ports/sql.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { reindexRecords } from './bm25-index.ts';
import { snapshot } from './record-import.ts';
import type { RecordStatus } from './record-schema.ts';

export interface RecordSummary {
  id: string;
  slug: string;
  title: string;
  status: RecordStatus;
  content_version: number;
  updated_at: string;
  approved_at: string | null;
  /** Whether the passages embedded match the current text (for the given model). */
  embedded: boolean;
}

export async function listRecords(sql: Sql, options: { status?: RecordStatus; limit: number }): Promise<RecordSummary[]> {
  return sql.query<RecordSummary>(
    `SELECT id::text AS id, slug, title, status, content_version, updated_at, approved_at,
            (embedded_hash IS NOT DISTINCT FROM content_hash AND embedding_model IS NOT NULL) AS embedded
       FROM records WHERE ($1::text IS NULL OR status = $1) ORDER BY slug LIMIT $2`,
    [options.status ?? null, options.limit],
  );
}

/**
 * Sets the status of records named by slug or id, all or nothing. Returns the ids
 * whose status changed (approved ones may need embedding).
 */
export async function setRecordStatus(sql: Sql, identifiers: readonly string[], status: Exclude<RecordStatus, 'candidate'>): Promise<string[]> {
  return sql.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; slug: string; status: string }>(
      `SELECT id::text AS id, slug, status FROM records
        WHERE slug IN (SELECT jsonb_array_elements_text($1::jsonb)) OR id::text IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [JSON.stringify(identifiers)],
    );
    const known = new Set(rows.flatMap((r) => [r.id, r.slug]));
    const unknown = identifiers.filter((i) => !known.has(i));
    if (unknown.length > 0) throw new NotFoundError(`No record has that slug or id: ${unknown.join(', ')}. Nothing was changed.`, { unknown });
    const changed = rows.filter((row) => row.status !== status).map((row) => row.id);
    if (changed.length === 0) return changed;
    await tx.query(
      `UPDATE records SET status = $2, updated_at = now(), approved_at = CASE WHEN $2 = 'approved' THEN now() ELSE approved_at END
        WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)`,
      [JSON.stringify(changed), status],
    );
    if (status === 'approved') await snapshot(tx, changed);
    await reindexRecords(tx, changed);
    return changed;
  });
}
