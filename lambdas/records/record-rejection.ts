/**
 * Rejecting what waits for review: a candidate (never approved) leaves `records`,
 * so it is neither in the review queue nor anywhere near search; a pending
 * revision of an approved record leaves `record_revisions`, and the approved
 * version keeps serving. Nothing is lost: the rejected text exactly as staged,
 * its content hash, who rejected it, why and when go into `record_rejections`
 * (`schema/011_owner_console.sql`), which `records history` shows.
 *
 * All or nothing: an identifier that names no record, an approved record with no
 * revision waiting, a deprecated record, or a candidate that was approved before
 * (its history would go with it) refuses the whole command.
 */
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import { findByIdentifiers } from './record-review.ts';
import { textSet, uuidSet } from './record-identifiers.ts';

export type RejectionKind = 'candidate' | 'revision';

export interface RejectOptions {
  readonly reviewer: string;
  readonly reason: string;
}

/** `records.reject`: what was rejected, one entry per record, in the order found. */
export interface RejectResult {
  readonly rejected: number;
  readonly records: readonly { id: string; slug: string; kind: RejectionKind }[];
}

/** One rejection as `records history` shows it (the text itself stays in the table). */
export interface RejectionEntry {
  kind: RejectionKind;
  content_hash: string;
  rejected_by: string;
  reason: string;
  rejected_at: string;
}

interface Target {
  id: string;
  slug: string;
  status: string;
  file: string | null;
  content_hash: string;
  revision: string | null;
  revision_hash: string | null;
  approved_before: boolean;
}

/** The refusal for each record that has nothing to reject, or an empty list. */
function refusals(rows: readonly Target[]): { where: string; problem: string }[] {
  return rows.flatMap((row) => {
    if (row.status === 'deprecated') return [{ where: row.slug, problem: 'is deprecated; there is nothing waiting for review to reject' }];
    if (row.status === 'approved' && row.revision === null) return [{ where: row.slug, problem: 'is approved and has no revision waiting; deprecate it instead' }];
    if (row.status === 'candidate' && row.approved_before) return [{ where: row.slug, problem: 'was approved before; deprecate it instead, so its history stays' }];
    if (row.status === 'candidate' && row.file === null) return [{ where: row.slug, problem: 'was stored before review kept its file; re-import its file first' }];
    return [];
  });
}

/** Rejects candidates and pending revisions (see the module comment). */
export async function rejectRecords(sql: Sql, identifiers: readonly string[], options: RejectOptions): Promise<RejectResult> {
  return sql.transaction(async (tx) => {
    const rows = await findByIdentifiers<Target>(
      tx,
      identifiers,
      `r.id::text AS id, r.slug, r.status, r.file, r.content_hash, v.content AS revision, v.content_hash AS revision_hash,
       EXISTS (SELECT 1 FROM record_history h WHERE h.record_id = r.id) AS approved_before`,
      'records r LEFT JOIN record_revisions v ON v.record_id = r.id',
    );
    const problems = refusals(rows);
    if (problems.length > 0) {
      throw new ValidationError(`Nothing was rejected: ${problems.map((p) => `${p.where} ${p.problem}`).join('; ')}.`, { problems });
    }
    const rejections = rows.map((row) => {
      const kind: RejectionKind = row.status === 'candidate' ? 'candidate' : 'revision';
      const content = kind === 'candidate' ? row.file! : row.revision!;
      const hash = kind === 'candidate' ? row.content_hash : row.revision_hash!;
      return { record_id: row.id, slug: row.slug, kind, content, content_hash: hash };
    });
    await tx.query(
      `INSERT INTO record_rejections (record_id, slug, kind, content, content_hash, rejected_by, reason)
       SELECT x.record_id, x.slug, x.kind, x.content, x.content_hash, $2, $3
         FROM jsonb_to_recordset($1::jsonb) AS x(record_id uuid, slug text, kind text, content text, content_hash text)`,
      [JSON.stringify(rejections), options.reviewer, options.reason],
    );
    const ids = (kind: RejectionKind) => JSON.stringify(rejections.filter((r) => r.kind === kind).map((r) => r.record_id));
    await tx.query(`DELETE FROM record_revisions WHERE record_id = ANY (${uuidSet(1)})`, [ids('revision')]);
    await tx.query(`DELETE FROM records WHERE status = 'candidate' AND id = ANY (${uuidSet(1)})`, [ids('candidate')]);
    return { rejected: rejections.length, records: rejections.map((r) => ({ id: r.record_id, slug: r.slug, kind: r.kind })) };
  });
}

/** The rejections of a record (by its id, or its slug for a candidate rejected and imported again), oldest first. */
export async function rejectionsOf(sql: Sql, record: { id: string | null; slug: string }): Promise<RejectionEntry[]> {
  return sql.query<RejectionEntry>(
    `SELECT kind, content_hash, rejected_by, reason, rejected_at FROM record_rejections
      WHERE record_id = ANY (${uuidSet(1)}) OR slug = ANY (${textSet(2)}) ORDER BY rejected_at, id`,
    [JSON.stringify(record.id ? [record.id] : []), JSON.stringify([record.slug])],
  );
}
