/**
 * Anonymous feedback for owner review. The table has no column for a key id, IP
 * address, user agent or client identifier, so none can be stored by mistake.
 * Feedback is never read by ranking.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import type { SubmitFeedbackInput, SubmitFeedbackOutput } from '../../schema/tools.ts';

export async function storeFeedback(sql: Sql, input: SubmitFeedbackInput): Promise<SubmitFeedbackOutput> {
  const id = randomUUID();
  await sql.query('INSERT INTO feedback (id, category, record_ref, source, comment) VALUES ($1::uuid, $2, $3, $4, $5)', [
    id,
    input.category,
    input.record ?? null,
    input.source,
    input.comment ?? null,
  ]);
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
