/**
 * The review queue in one read: every candidate and every approved record with a
 * revision waiting, each with the gate report of exactly the text approving it
 * would publish (`reviewableRecords`, `gateReports`), oldest first. What an owner
 * then does with each is `records approve` or `records reject`.
 */
import type { Sql } from '../ports/sql.ts';
import { gateReports, reviewableRecords } from './record-approval.ts';
import type { GateReport, ReviewRules } from './quality-gates.ts';

/** One record waiting for review. */
export interface QueueItem {
  id: string;
  slug: string;
  /** The title of the text under review (the revision's for a revision). */
  title: string;
  /** `candidate`: never approved; `revision`: a changed text of an approved record, which keeps serving meanwhile. */
  kind: 'candidate' | 'revision';
  /** When the candidate was first imported, or when the revision was staged. */
  staged_at: string;
  /** The quality gates on the text approving would publish; null for a record stored before review kept its file. */
  gates: GateReport | null;
}

interface QueueRow {
  id: string;
  slug: string;
  title: string;
  kind: 'candidate' | 'revision';
  staged_at: string;
}

/** How many records the queue lists at most (a larger backlog is reviewed in passes). */
export const QUEUE_LIMIT = 1000;

export async function reviewQueue(sql: Sql, rules: ReviewRules): Promise<QueueItem[]> {
  const rows = await sql.query<QueueRow>(
    `SELECT r.id::text AS id, r.slug, r.title,
            CASE WHEN r.status = 'candidate' THEN 'candidate' ELSE 'revision' END AS kind,
            CASE WHEN r.status = 'candidate' THEN r.created_at ELSE v.staged_at END AS staged_at
       FROM records r LEFT JOIN record_revisions v ON v.record_id = r.id
      WHERE r.status = 'candidate' OR (r.status = 'approved' AND v.record_id IS NOT NULL)
      ORDER BY 5, r.slug LIMIT ${QUEUE_LIMIT}`,
  );
  if (rows.length === 0) return [];
  const found = await reviewableRecords(sql, rows.map((r) => r.id));
  const texts = new Map(found.flatMap((f) => (f.record ? [[f.row.id, f.record] as const] : [])));
  const reports = await gateReports(sql, [...texts.values()], rules);
  const bySlug = new Map(reports.map((r) => [r.slug, r]));
  return rows.map((row) => {
    const text = texts.get(row.id);
    return { ...row, title: text?.title ?? row.title, gates: text ? (bySlug.get(text.slug) ?? null) : null };
  });
}
