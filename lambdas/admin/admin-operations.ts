/**
 * Owner operations: issue, list and revoke API keys, set a key's daily quota,
 * import, review and embed guidance records, read feedback. One validated command
 * in, one JSON result out, so the same operations run from the CLI directly,
 * through the local admin endpoint, and (on AWS) inside the IAM-only admin Lambda.
 * How results and errors travel is `admin-envelope.ts`.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { importRecords, type ImportSummary } from '../records/record-import.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import { embedRecords, passagesOf, recordsToEmbed, type EmbedProgress } from '../embeddings/record-embeddings.ts';
import { errorKind } from '../observability/logger.ts';
import { listRecords, setRecordStatus } from '../records/record-review.ts';
import { RECORD_STATUSES } from '../records/record-schema.ts';
import { SETTINGS } from '../config/settings.ts';
import type { Logger } from '../ports/logger.ts';
import { errorEnvelope, resultEnvelope, type AdminEnvelope } from './admin-envelope.ts';
import { listFeedback } from '../feedback/feedback-repository.ts';
import { FEEDBACK_CATEGORIES } from '../../schema/tools.ts';
import { validateRecords } from '../records/record-files.ts';

const quota = z.number().int().min(0).max(100_000_000).nullable();

export const adminCommand = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('keys.create'), name: z.string().trim().min(1).max(120), daily_quota: quota.default(null) }),
  z.strictObject({ op: z.literal('keys.list') }),
  z.strictObject({ op: z.literal('keys.revoke'), id: z.string().min(1).max(64) }),
  z.strictObject({ op: z.literal('keys.set_quota'), id: z.string().min(1).max(64), daily_quota: quota }),
  z.strictObject({
    op: z.literal('records.import'),
    records: z.array(z.unknown()).min(1).max(100_000),
    /** Where each record came from (file:line), for error messages. */
    where: z.array(z.string()).optional(),
    approve: z.boolean().default(false),
  }),
  z.strictObject({ op: z.literal('embeddings.backfill'), force: z.boolean().default(false), dry_run: z.boolean().default(false) }),
  z.strictObject({
    op: z.literal('records.list'),
    status: z.enum(RECORD_STATUSES).optional(),
    limit: z.number().int().min(1).max(10_000).default(1000),
  }),
  z.strictObject({
    op: z.literal('records.set_status'),
    ids: z.array(z.string().min(1).max(120)).min(1).max(1000),
    status: z.enum(RECORD_STATUSES).exclude(['candidate']),
  }),
  z.strictObject({
    op: z.literal('feedback.list'),
    category: z.enum(FEEDBACK_CATEGORIES).optional(),
    limit: z.number().int().min(1).max(10_000).default(100),
  }),
]);
export type AdminCommand = z.input<typeof adminCommand>;
export type AdminOp = AdminCommand['op'];

/** The operation a raw command names, for logs: one of the known ops, or `unknown`. */
export function adminOpOf(command: unknown): AdminOp | 'unknown' {
  const op = command && typeof command === 'object' ? (command as { op?: unknown }).op : undefined;
  return adminCommand.options.some((option) => option.shape.op.value === op) ? (op as AdminOp) : 'unknown';
}

export interface AdminDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  /** The configured embedding provider; undefined for none. */
  readonly embedder?: Embedder;
  /** Told after a key is revoked or its quota changes, so a cache of keys can forget it. */
  readonly keysChanged?: () => void;
  /** Progress of long operations (embedding), for a progress bar. */
  readonly onProgress?: (progress: EmbedProgress) => void;
}

export interface ImportResult extends ImportSummary {
  /** Records embedded after the import committed, or why they could not be. */
  embedding: { embedded: number; skipped_reason?: string };
}

export interface BackfillResult {
  provider: string;
  model: string;
  stale: number;
  passages: number;
  embedded: number;
  dry_run: boolean;
  /** Bedrock only: estimated price of embedding the stale passages. */
  estimated_cost_usd?: number;
}

/** Embeds what an import changed. Failure leaves the records keyword-searchable and stale for backfill. */
export async function embedChanged(deps: AdminDeps, ids: readonly string[]): Promise<ImportResult['embedding']> {
  if (!deps.embedder) return { embedded: 0, skipped_reason: 'no embedding provider is configured' };
  if (ids.length === 0) return { embedded: 0 };
  try {
    const stale = await recordsToEmbed(deps.sql, deps.embedder.model, { ids });
    const done = await embedRecords(deps.sql, deps.embedder, stale, { onProgress: deps.onProgress });
    return { embedded: done.embedded };
  } catch (error) {
    return { embedded: 0, skipped_reason: `embedding failed (${errorKind(error)}); run \`chatctx embeddings backfill\`` };
  }
}

async function backfill(deps: AdminDeps, force: boolean, dryRun: boolean): Promise<BackfillResult> {
  if (!deps.embedder) throw new ValidationError(`No embedding provider is configured (${SETTINGS.embeddings.env}=none).`);
  const embedder = deps.embedder;
  const stale = await recordsToEmbed(deps.sql, embedder.model, { force });
  const texts = stale.flatMap(passagesOf);
  const result: BackfillResult = {
    provider: embedder.provider,
    model: embedder.model,
    stale: stale.length,
    passages: texts.length,
    embedded: 0,
    dry_run: dryRun,
    estimated_cost_usd: embedder.estimateCostUsd?.(texts),
  };
  if (dryRun) return result;
  const done = await embedRecords(deps.sql, embedder, stale, { onProgress: deps.onProgress });
  return { ...result, embedded: done.embedded };
}

export async function runAdminCommand(deps: AdminDeps, raw: unknown): Promise<unknown> {
  const parsed = adminCommand.safeParse(raw);
  if (!parsed.success) {
    throw new ValidationError('Invalid admin command.', {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const command = parsed.data;
  const keys = new KeyRepository(deps.sql, deps.secrets);
  switch (command.op) {
    case 'keys.create':
      return keys.create(command.name, command.daily_quota);
    case 'keys.list':
      return keys.list();
    case 'keys.revoke':
      return keys.revoke(command.id).finally(() => deps.keysChanged?.());
    case 'keys.set_quota':
      return keys.setDailyQuota(command.id, command.daily_quota).finally(() => deps.keysChanged?.());
    case 'records.import': {
      const where = command.where;
      const records = await validateRecords(command.records, (i) => where?.[i] ?? `record ${i + 1}`);
      const summary = await importRecords(deps.sql, records, { approve: command.approve });
      return { ...summary, embedding: await embedChanged(deps, summary.changed_ids) } satisfies ImportResult;
    }
    case 'embeddings.backfill':
      return backfill(deps, command.force, command.dry_run);
    case 'records.list':
      return listRecords(deps.sql, { status: command.status, limit: command.limit });
    case 'records.set_status': {
      const changed = await setRecordStatus(deps.sql, command.ids, command.status);
      const embedding = command.status === 'approved' ? await embedChanged(deps, changed) : { embedded: 0 };
      return { changed: changed.length, embedding };
    }
    case 'feedback.list':
      return listFeedback(deps.sql, { category: command.category, limit: command.limit });
  }
}

/** Runs one command and wraps its outcome in the envelope; logs the op and outcome, never the command. */
export async function runEnveloped(deps: AdminDeps, command: unknown, logger: Logger): Promise<AdminEnvelope> {
  const op = adminOpOf(command);
  try {
    const result = await runAdminCommand(deps, command);
    logger.info('admin_command', { op, outcome: 'ok' });
    return resultEnvelope(result);
  } catch (error) {
    const envelope = errorEnvelope(error);
    const code = envelope.error.code;
    logger.info('admin_command', { op, outcome: code, error: code === 'internal' ? errorKind(error) : undefined });
    return envelope;
  }
}
