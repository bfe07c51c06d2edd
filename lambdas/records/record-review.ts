/**
 * Owner review of records already in the store: list them by status, list the
 * ones due for review, deprecate (withdraw from search and get_guidance, naming a
 * successor). Every status change also updates the BM25 statistics in the same
 * transaction. Approving is `record-approval.ts` (the gates come first); editing
 * text is the import's job.
 */
import type { Sql } from '../ports/sql.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { reindexRecords } from './bm25-index.ts';
import { setStatuses } from './record-import.ts';
import type { RecordStatus } from './record-schema.ts';
import { asRecordId, recordIdsParam, textSet, uuidSet } from './record-identifiers.ts';
import { checkKey, latestChecks } from './source-verification.ts';
import { collectionIds } from './collections.ts';

export interface RecordSummary {
  id: string;
  slug: string;
  title: string;
  status: RecordStatus;
  content_version: number;
  updated_at: string;
  approved_at: string | null;
  reviewed_at: string | null;
  /** Whether a changed text waits for review (`records diff`, `records approve`). */
  pending_revision: boolean;
  /** Whether the passages embedded match the current text (for the given model). */
  embedded: boolean;
  /** The name of the collection the record belongs to. */
  collection: string;
}

/** Records by slug, optionally of one status and one collection (by name; an unknown name is a `NotFoundError`). */
export async function listRecords(sql: Sql, options: { status?: RecordStatus; collection?: string; limit: number }): Promise<RecordSummary[]> {
  const collection = options.collection === undefined ? null : (await collectionIds(sql, [options.collection])).get(options.collection)!;
  return sql.query<RecordSummary>(
    `SELECT r.id::text AS id, r.slug, r.title, r.status, r.content_version, r.updated_at, r.approved_at, r.reviewed_at::text AS reviewed_at,
            EXISTS (SELECT 1 FROM record_revisions v WHERE v.record_id = r.id) AS pending_revision,
            (r.embedded_hash IS NOT DISTINCT FROM r.content_hash AND r.embedding_model IS NOT NULL) AS embedded,
            c.name AS collection
       FROM records r JOIN collections c ON c.id = r.collection_id
      WHERE ($1::text IS NULL OR r.status = $1) AND ($3::int IS NULL OR r.collection_id = $3)
      ORDER BY r.slug LIMIT $2`,
    [options.status ?? null, options.limit, collection],
  );
}

/**
 * The records named by slug or id, selecting `columns` (table alias `r`, joins
 * allowed in `from`); all or nothing: any identifier that names no record is a
 * `NotFoundError` listing them, so a command never acts on part of what it was given.
 */
export async function findByIdentifiers<T extends { id: string; slug: string }>(
  sql: Sql,
  identifiers: readonly string[],
  columns: string,
  from = 'records r',
): Promise<T[]> {
  const rows = await sql.query<T>(
    `SELECT ${columns} FROM ${from}
      WHERE r.slug = ANY (${textSet(1)}) OR r.id = ANY (${uuidSet(2)})`,
    [JSON.stringify(identifiers), recordIdsParam(identifiers)],
  );
  const known = new Set(rows.flatMap((r) => [r.id, r.slug]));
  const unknown = identifiers.filter((i) => !known.has(i));
  if (unknown.length > 0) throw new NotFoundError(`No record has that slug or id: ${unknown.join(', ')}. Nothing was changed.`, { unknown });
  return rows;
}

/**
 * Deprecates records named by slug or id, all or nothing, with a reason and
 * optionally the approved record that succeeds them (`get_guidance` then names it
 * to agents asking for the old one). `updated_at` is left alone: the text did not
 * change. Returns the ids whose status changed.
 */
export async function deprecateRecords(
  sql: Sql,
  identifiers: readonly string[],
  options: { reason?: string; supersededBy?: string },
): Promise<string[]> {
  return sql.transaction(async (tx) => {
    const rows = await findByIdentifiers<{ id: string; slug: string; status: string }>(tx, identifiers, 'r.id::text AS id, r.slug, r.status');
    const successor = options.supersededBy ? await successorOf(tx, options.supersededBy, rows) : null;
    const changed = rows.filter((row) => row.status !== 'deprecated').map((row) => row.id);
    if (changed.length === 0) return changed;
    const reason = options.reason ?? (successor ? `superseded by ${successor.slug}` : null);
    await setStatuses(tx, changed.map((id) => ({ id, status: 'deprecated' as const, reason })));
    if (successor) {
      await tx.query(`UPDATE records SET superseded_by = $2::uuid WHERE id = ANY (${uuidSet(1)})`, [
        JSON.stringify(changed),
        successor.id,
      ]);
    }
    await reindexRecords(tx, changed);
    return changed;
  });
}

/** The successor must be an approved record other than the ones being deprecated. */
async function successorOf(tx: Sql, identifier: string, retiring: readonly { id: string }[]): Promise<{ id: string; slug: string }> {
  const [row] = await tx.query<{ id: string; slug: string; status: string }>(
    'SELECT id::text AS id, slug, status FROM records WHERE slug = $1 OR id = $2::uuid',
    [identifier, asRecordId(identifier)],
  );
  if (!row) throw new NotFoundError(`No record has the slug or id ${identifier}; nothing was deprecated.`, { superseded_by: identifier });
  if (row.status !== 'approved' || retiring.some((r) => r.id === row.id)) {
    throw new ValidationError(`The successor ${row.slug} must be an approved record other than the ones deprecated; nothing was deprecated.`, {
      superseded_by: row.slug,
    });
  }
  return row;
}

export interface StaleRecord {
  slug: string;
  title: string;
  reviewed_at: string | null;
  /** Whole months since the review; null when the record was never reviewed. */
  months: number | null;
  /** The worse of the reasons: a long-missed review or an excerpt gone from its page fails. */
  verdict: 'warn' | 'fail';
  /** Why it is listed: its review is due, and/or a check since its approval found a source wanting. */
  reasons: ('freshness' | 'evidence')[];
  /** The sources whose newest check (since the record was approved) did not find the excerpt. */
  sources: { url: string; status: string; checked_at: string; similarity: number | null }[];
}

/**
 * Approved records due for review: the last review older than the freshness rules
 * allow, or a source whose newest check since the approval did not find the excerpt
 * (`records verify`, the schedule); oldest review first. A drifted record stays
 * published until the owner re-verifies, edits or deprecates it.
 */
export async function staleRecords(sql: Sql, rules: { freshnessWarnMonths: number; freshnessFailMonths: number }, now = new Date()): Promise<StaleRecord[]> {
  const rows = await sql.query<{ slug: string; title: string; reviewed_at: string | null; months: number | null; approved_at: string | null; sources: { url: string; evidence_excerpt: string | null }[] }>(
    `SELECT r.slug, r.title, r.reviewed_at::text AS reviewed_at, r.approved_at::text AS approved_at,
            floor(extract(epoch FROM ($1::timestamptz - r.reviewed_at::timestamptz)) / (30.4375 * 86400))::int AS months,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('url', s.url, 'evidence_excerpt', s.evidence_excerpt) ORDER BY s.position), '[]'::jsonb)
               FROM record_sources s WHERE s.record_id = r.id) AS sources
       FROM records r WHERE r.status = 'approved'
      ORDER BY r.reviewed_at NULLS FIRST, r.slug`,
    [now.toISOString()],
    { json: ['sources'] },
  );
  const checks = await latestChecks(sql, rows.flatMap((r) => r.sources));
  const dueMs = rules.freshnessWarnMonths * 30.4375 * 86_400_000;
  return rows.flatMap((row): StaleRecord[] => {
    const reasons: StaleRecord['reasons'] = [];
    const fresh = row.reviewed_at !== null && now.getTime() - Date.parse(`${row.reviewed_at}T00:00:00Z`) <= dueMs;
    if (!fresh) reasons.push('freshness');
    const wanting = row.sources.flatMap((source) => {
      const check = source.evidence_excerpt ? checks.get(checkKey(source.url, source.evidence_excerpt)) : undefined;
      if (!check || check.status === 'verified' || (row.approved_at !== null && Date.parse(check.checkedAt) < Date.parse(row.approved_at))) return [];
      return [{ url: source.url, status: check.status, checked_at: check.checkedAt, similarity: check.similarity }];
    });
    if (wanting.length > 0) reasons.push('evidence');
    if (reasons.length === 0) return [];
    const overdue = !fresh && (row.months === null || row.months >= rules.freshnessFailMonths);
    const verdict = overdue || wanting.some((w) => w.status === 'drifted') ? 'fail' : 'warn';
    return [{ slug: row.slug, title: row.title, reviewed_at: row.reviewed_at, months: row.months, verdict, reasons, sources: wanting }];
  });
}
