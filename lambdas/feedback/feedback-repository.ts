/**
 * Anonymous feedback for owner review. The table has no column for a key id, IP
 * address, user agent or client identifier, so none can be stored by mistake.
 * Feedback is never read by ranking. An owner marks what they dealt with as
 * reviewed (`reviewed_at`, the only column an owner changes).
 *
 * A call delivered twice (a retried Lambda Invoke) stores one row: with an
 * idempotency key the row's id is derived from the key, and a second insert of the
 * same id does nothing (the primary key is the table's only unique constraint). The key is random per tool call (`mcp-server.ts` makes it),
 * so the id says nothing about the caller. The statements need only INSERT on
 * feedback and the three `records` columns the feedback role may read.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { asUuid } from '../storage/uuid-text.ts';
import type { SubmitFeedbackInput, SubmitFeedbackOutput } from '../../schema/tools.ts';
import type { CallerScope } from '../ports/tool-invoker.ts';

export interface StoreFeedbackOptions {
  /** The same for every delivery of one call; see `ToolInvocation.idempotencyKey`. */
  readonly idempotencyKey?: string;
  /** What the caller may see and do (the tool passes a guest's when the call carries none). */
  readonly scope: CallerScope;
}

/**
 * Stores one piece of feedback. A `record` must name an approved record (slug or
 * id): feedback about something the agent was never shown cannot be acted on, so
 * it is refused with a `validation_error` that says so, and nothing is stored.
 */
export async function storeFeedback(sql: Sql, input: SubmitFeedbackInput, options: StoreFeedbackOptions): Promise<SubmitFeedbackOutput> {
  const scope = options.scope;
  if (!scope.feedback) {
    throw new ValidationError('This API key may not submit feedback. Ask the owner to add the `feedback` scope to it; nothing was stored.', {
      issues: [{ path: '', code: 'feedback_not_in_scope', message: 'the key lacks the feedback scope' }],
    });
  }
  const record = input.record ?? null;
  const collections = JSON.stringify(scope.collections);
  if (record !== null) {
    // A record outside the caller's collections is unknown to it, exactly like one that does not exist.
    const approved = await sql.query(`SELECT 1 FROM records WHERE status = 'approved' AND (slug = $1 OR id = $2::uuid) AND ${VISIBLE(3)}`, [
      record,
      asUuid(record),
      collections,
    ]);
    if (approved.length === 0) {
      throw new ValidationError('`record` is not the slug or id of an approved record. Use one that search_knowledge or get_guidance returned, or leave it out.', {
        issues: [{ path: 'record', code: 'unknown_record', message: 'not an approved record slug or id' }],
      });
    }
  }
  const id = options.idempotencyKey ? feedbackIdFor(options.idempotencyKey) : randomUUID();
  // The approval is checked again in the insert, so a record deprecated in between is never referenced.
  // No conflict target and no RETURNING: either would need SELECT on feedback, which the role lacks.
  await sql.query(
    `INSERT INTO feedback (id, category, record_ref, source, comment)
     SELECT $1::uuid, $2, $3, $4, $5
      WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM records WHERE status = 'approved' AND (slug = $3 OR id = $6::uuid) AND ${VISIBLE(7)})
     ON CONFLICT DO NOTHING`,
    [id, input.category, record, input.source, input.comment ?? null, record === null ? null : asUuid(record), collections],
  );
  return { accepted: true, id, message: 'Anonymous feedback recorded for owner review.' };
}

/** `$n` (a jsonb array of collection ids) holds the record's collection. */
const VISIBLE = (n: number) => `collection_id = ANY (ARRAY(SELECT jsonb_array_elements_text($${n}::jsonb)::int))`;

/** A UUID (version 8, "custom") from the SHA-256 of the idempotency key. */
export function feedbackIdFor(idempotencyKey: string): string {
  const bytes = createHash('sha256').update(`chatctx feedback\n${idempotencyKey}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface FeedbackRow {
  id: string;
  category: string;
  record: string | null;
  source: string;
  comment: string | null;
  created_at: string;
  /** When an owner marked it reviewed (`feedback review`); null while it waits. */
  reviewed_at: string | null;
}

export interface FeedbackFilter {
  readonly category?: string;
  /** true: only feedback marked reviewed; false: only feedback still waiting; undefined: both. */
  readonly reviewed?: boolean;
  readonly limit: number;
}

/** Feedback for owner review, newest first. */
export function listFeedback(sql: Sql, options: FeedbackFilter): Promise<FeedbackRow[]> {
  return sql.query<FeedbackRow>(
    `SELECT id::text AS id, category, record_ref AS record, source, comment, created_at, reviewed_at FROM feedback
      WHERE ($1::text IS NULL OR category = $1) AND ($3::boolean IS NULL OR (reviewed_at IS NOT NULL) = $3::boolean)
      ORDER BY created_at DESC, id LIMIT $2`,
    [options.category ?? null, options.limit, options.reviewed ?? null],
  );
}

/** `feedback.review`: how many were newly marked, and how many of the ids were marked before. */
export interface FeedbackReviewResult {
  reviewed: number;
  already_reviewed: number;
}

/**
 * Marks feedback reviewed, all or nothing: an id that names no feedback is a
 * `NotFoundError` listing them, and nothing is marked. Feedback marked before keeps
 * its first time.
 */
export async function markFeedbackReviewed(sql: Sql, ids: readonly string[], now: Date = new Date()): Promise<FeedbackReviewResult> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  return sql.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; reviewed: boolean }>(
      'SELECT id::text AS id, reviewed_at IS NOT NULL AS reviewed FROM feedback WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::uuid))',
      [JSON.stringify(unique)],
    );
    const known = new Set(rows.map((r) => r.id));
    const unknown = unique.filter((id) => !known.has(id));
    if (unknown.length > 0) throw new NotFoundError(`No feedback has that id: ${unknown.join(', ')}. Nothing was marked.`, { unknown });
    const waiting = rows.filter((r) => !r.reviewed).map((r) => r.id);
    if (waiting.length > 0) {
      await tx.query('UPDATE feedback SET reviewed_at = $2::timestamptz WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::uuid))', [
        JSON.stringify(waiting),
        now.toISOString(),
      ]);
    }
    return { reviewed: waiting.length, already_reviewed: rows.length - waiting.length };
  });
}
