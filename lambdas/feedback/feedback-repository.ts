/**
 * Anonymous feedback for owner review. The table has no column for a key id, IP
 * address, user agent or client identifier, so none can be stored by mistake.
 * Feedback is never read by ranking.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import type { SubmitFeedbackInput, SubmitFeedbackOutput } from '../../schema/tools.ts';

/**
 * Stores one piece of feedback. A `record` must name an approved record (slug or
 * id): feedback about something the agent was never shown cannot be acted on, so
 * it is refused with a `validation_error` that says so, and nothing is stored.
 */
export async function storeFeedback(sql: Sql, input: SubmitFeedbackInput): Promise<SubmitFeedbackOutput> {
  const id = randomUUID();
  // One statement: the row is inserted only when the record (if any) is approved.
  const inserted = await sql.query<{ id: string }>(
    `INSERT INTO feedback (id, category, record_ref, source, comment)
     SELECT $1::uuid, $2, $3, $4, $5
      WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM records WHERE status = 'approved' AND (slug = $3 OR id::text = $3))
     RETURNING id::text AS id`,
    [id, input.category, input.record ?? null, input.source, input.comment ?? null],
  );
  if (inserted.length === 0) {
    throw new ValidationError('`record` is not the slug or id of an approved record. Use one that search_knowledge or get_guidance returned, or leave it out.', {
      issues: [{ path: 'record', code: 'unknown_record', message: 'not an approved record slug or id' }],
    });
  }
  return { accepted: true, id, message: 'Anonymous feedback recorded for owner review.' };
}

export interface FeedbackRow {
  id: string;
  category: string;
  record: string | null;
  source: string;
  comment: string | null;
  created_at: string;
}

/** Feedback for owner review, newest first. */
export function listFeedback(sql: Sql, options: { category?: string; limit: number }): Promise<FeedbackRow[]> {
  return sql.query<FeedbackRow>(
    `SELECT id::text AS id, category, record_ref AS record, source, comment, created_at FROM feedback
      WHERE ($1::text IS NULL OR category = $1) ORDER BY created_at DESC, id LIMIT $2`,
    [options.category ?? null, options.limit],
  );
}
