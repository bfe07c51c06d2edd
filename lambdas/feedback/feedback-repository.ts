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
