/**
 * Owner operations: issue, list and revoke API keys, set a key's daily quota and
 * its scopes (the collections it sees, and feedback);
 * import guidance records, judge them with the quality gates, approve (with
 * reviewer and overrides) or reject (kept with who and why), list the review
 * queue, deprecate, read their versions, history and diffs, search them as an
 * agent would with why each candidate was shown or cut, extend the source policy,
 * embed them; read feedback and mark it reviewed, read analytics; create, list and
 * rename collections and move records between them (`collection-operations.ts`). One validated command
 * in, one JSON result out, so the same operations run from the CLI directly,
 * through the local admin endpoint, and (on AWS) inside the IAM-only admin Lambda.
 * How results and errors travel is `admin-envelope.ts`.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { DEFAULT_KEY_COLLECTIONS, availableScopes, changeKeyScope, createScopedKey, showKeys } from './key-scopes.ts';
import type { ImportSummary } from '../records/record-import.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import { embedRecords, passagesOf, recordsToEmbed, type EmbedProgress } from '../embeddings/record-embeddings.ts';
import { errorKind } from '../observability/logger.ts';
import { deprecateRecords, listRecords, staleRecords } from '../records/record-review.ts';
import { approveStored, gateReports, importReviewed, reviewableRecords, type ReviewOptions } from '../records/record-approval.ts';
import { GATE_CODES, readReviewRules, type GateReport, type ReviewRules } from '../records/quality-gates.ts';
import { diffRecord, recordHistory, showRecord } from '../records/record-history.ts';
import { changePolicy, effectivePolicy, storePolicyEntries } from '../records/source-policy.ts';
import { DEFAULT_SYNONYMS, SYNONYM_LIMITS, changeSynonym, storeSynonyms } from '../records/query-synonyms.ts';
import { PROFILE_NAMES, relevanceProfileSchema } from '../retrieval/relevance.ts';
import { DEFAULT_PROFILES, loadProfiles, profileNameOf, removeProfile, saveProfile, storedProfiles } from '../retrieval/relevance-profiles.ts';
import { replayQuestions } from '../retrieval/relevance-replay.ts';
import { RECORD_STATUSES } from '../records/record-schema.ts';
import { SETTINGS, settingDefault } from '../config/settings.ts';
import type { Logger } from '../ports/logger.ts';
import { errorEnvelope, resultEnvelope, type AdminEnvelope } from './admin-envelope.ts';
import { listFeedback, markFeedbackReviewed } from '../feedback/feedback-repository.ts';
import { rejectRecords, type RejectResult } from '../records/record-rejection.ts';
import { reviewQueue, type QueueItem } from '../records/review-queue.ts';
import { ownerSearch, type OwnerSearchResult } from '../retrieval/search-explain.ts';
import { FEEDBACK_CATEGORIES } from '../../schema/tools.ts';
import { validateRecords } from '../records/record-files.ts';
import { analyticsReport, purgeSearchEvents, type AnalyticsReport } from '../analytics/search-analytics.ts';
import { checkKey, latestChecks, sourcesToVerify, verifySources } from '../records/source-verification.ts';
import type { SourceCheckStatus, SourceFetcher } from '../records/source-check.ts';
import { UntrustedFetcher } from '../streams/untrusted-fetch.ts';
import { collectionCommands, collectionName, namedCollection, ownerSearchScope, runCollectionCommand, type SearchedCollections } from './collection-operations.ts';

const quota = z.number().int().min(0).max(100_000_000).nullable();
const identifier = z.string().min(1).max(120);
/** Who approves: a name from the CLI's flag or configuration (there is no account system). */
const reviewer = z.string().trim().min(1).max(120).default('unnamed reviewer');
const overrides = z
  .array(z.strictObject({ gate: z.enum(GATE_CODES), reason: z.string().trim().min(10, 'an override needs a reason of at least 10 characters').max(1000) }))
  .max(GATE_CODES.length)
  .refine((list) => new Set(list.map((o) => o.gate)).size === list.length, 'override each gate at most once')
  .default([]);
/** A collection name, or `feedback` (the scope that lets a key send feedback). */
const scopeWord = z.string().trim().min(1).max(40);
const versionRef = z.union([z.number().int().min(1), z.literal('pending')]);
/** Questions per `relevance.replay`: a calibration sends its set in batches this size. */
export const RELEVANCE_REPLAY_MAX = 200;

export const adminCommand = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('keys.create'),
    name: z.string().trim().min(1).max(120),
    daily_quota: quota.default(null),
    /** Collection names the key sees. */
    collections: z.array(scopeWord).min(1, 'a key needs at least one collection').max(100).default([...DEFAULT_KEY_COLLECTIONS]),
    /** Whether the key may call submit_feedback. */
    feedback: z.boolean().default(true),
  }),
  z.strictObject({ op: z.literal('keys.list') }),
  z.strictObject({ op: z.literal('keys.revoke'), id: z.string().min(1).max(64) }),
  z.strictObject({ op: z.literal('keys.set_quota'), id: z.string().min(1).max(64), daily_quota: quota }),
  z
    .strictObject({
      op: z.literal('keys.scope'),
      id: z.string().min(1).max(64),
      /** Collection names, or `feedback`. */
      add: z.array(scopeWord).max(100).default([]),
      remove: z.array(scopeWord).max(100).default([]),
    })
    .refine((c) => c.add.length + c.remove.length > 0, 'name a scope to add or remove'),
  z.strictObject({ op: z.literal('keys.scopes_available') }),
  z.strictObject({
    op: z.literal('records.import'),
    records: z.array(z.unknown()).min(1).max(100_000),
    /** Where each record came from (file:line), for error messages. */
    where: z.array(z.string()).optional(),
    approve: z.boolean().default(false),
    reviewer,
    overrides,
    /** The collection new records go into, by name, unless a record names its own. @default public */
    collection: collectionName.optional(),
  }),
  z.strictObject({ op: z.literal('embeddings.backfill'), force: z.boolean().default(false), dry_run: z.boolean().default(false) }),
  z.strictObject({
    op: z.literal('records.list'),
    status: z.enum(RECORD_STATUSES).optional(),
    collection: collectionName.optional(),
    limit: z.number().int().min(1).max(10_000).default(1000),
  }),
  z.strictObject({ op: z.literal('records.approve'), ids: z.array(identifier).min(1).max(1000), reviewer, overrides }),
  z.strictObject({
    op: z.literal('records.reject'),
    ids: z.array(identifier).min(1).max(1000),
    reviewer,
    reason: z.string().trim().min(10, 'a rejection needs a reason of at least 10 characters').max(1000),
  }),
  z.strictObject({ op: z.literal('records.queue') }),
  z.strictObject({
    op: z.literal('records.search'),
    /** search_knowledge arguments, exactly as an agent would send them. */
    arguments: z.unknown(),
    /** The collections searched, by name. @default every collection (an owner sees everything) */
    collections: z.array(collectionName).max(100).optional(),
  }),
  z.strictObject({
    op: z.literal('records.deprecate'),
    ids: z.array(identifier).min(1).max(1000),
    reason: z.string().trim().min(1).max(1000).optional(),
    superseded_by: identifier.optional(),
  }),
  z.strictObject({
    op: z.literal('records.gates'),
    /** Records in the store (their pending revision, else their text)… */
    ids: z.array(identifier).max(1000).optional(),
    /** …or record files not imported yet. */
    records: z.array(z.unknown()).max(100_000).optional(),
    where: z.array(z.string()).optional(),
  }),
  z.strictObject({ op: z.literal('records.show'), id: identifier, version: z.number().int().min(1).optional() }),
  z.strictObject({ op: z.literal('records.history'), id: identifier }),
  z.strictObject({ op: z.literal('records.diff'), id: identifier, from: versionRef.optional(), to: versionRef.optional() }),
  z.strictObject({ op: z.literal('records.stale') }),
  z.strictObject({ op: z.literal('records.verify'), ids: z.array(identifier).max(1000).default([]) }),
  z.strictObject({ op: z.literal('policy.list') }),
  z.strictObject({
    op: z.literal('policy.synonym'),
    term: z.string().trim().min(1).max(SYNONYM_LIMITS.termMaxChars),
    expansions: z.array(z.string().trim().min(1).max(SYNONYM_LIMITS.expansionMaxChars)).max(SYNONYM_LIMITS.expansionsMax).optional(),
    remove: z.boolean().default(false),
  }),
  z.strictObject({ op: z.literal('relevance.list') }),
  z.strictObject({
    op: z.literal('relevance.replay'),
    /** search_knowledge arguments, one per evaluation question. */
    questions: z.array(z.unknown()).min(1).max(RELEVANCE_REPLAY_MAX),
    mode: z.enum(['hybrid', 'keyword']),
  }),
  z.strictObject({ op: z.literal('relevance.save'), profile: relevanceProfileSchema }),
  z.strictObject({ op: z.literal('relevance.remove'), profile: z.enum(PROFILE_NAMES) }),
  z.strictObject({
    op: z.literal('policy.change'),
    kind: z.enum(['authoritative', 'blocked', 'technology']),
    value: z.string().trim().min(1).max(253),
    note: z.string().trim().min(1).max(300).optional(),
    remove: z.boolean().default(false),
  }),
  z.strictObject({
    op: z.literal('feedback.list'),
    category: z.enum(FEEDBACK_CATEGORIES).optional(),
    /** true: only feedback marked reviewed; false: only feedback still waiting. */
    reviewed: z.boolean().optional(),
    limit: z.number().int().min(1).max(10_000).default(100),
  }),
  z.strictObject({ op: z.literal('feedback.review'), ids: z.array(z.uuid()).min(1).max(1000) }),
  z.strictObject({
    op: z.literal('analytics.report'),
    days: z.number().int().min(1).max(3650).default(30),
    /** Only searches whose collection set holds this collection, and feedback about its records. */
    collection: collectionName.optional(),
  }),
  ...collectionCommands,
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
  /** The quality gates' thresholds. @default read from the environment's settings */
  readonly review?: ReviewRules;
  /** Search events older than this many days are deleted before a report. @default the `searchEventRetentionDays` setting's default */
  readonly searchEventRetentionDays?: number;
  /** Fetches the pages `records.verify` checks. @default public addresses only (`sourcesPrivateAddresses` allows the rest) */
  readonly fetcher?: SourceFetcher;
  /** Let `records.verify` fetch loopback and private addresses (`CHATCTX_SOURCES_PRIVATE_ADDRESSES`, local only). @default false */
  readonly sourcesPrivateAddresses?: boolean;
}

/** `records.verify`: how each source stands now, and the count of each status. */
export interface VerifyResult {
  readonly checked: number;
  readonly counts: Partial<Record<SourceCheckStatus, number>>;
  readonly sources: readonly {
    slugs: readonly string[];
    url: string;
    status: SourceCheckStatus;
    detail?: string;
    closest?: string;
    similarity?: number;
  }[];
}

/** The newest check's status of every quoted source of the approved records, of one collection or all (a source never checked is `unchecked`). */
async function evidenceStanding(sql: Sql, collection: number | null): Promise<AnalyticsResult['evidence']> {
  const sources = await sql.query<{ url: string; evidence_excerpt: string }>(
    `SELECT s.url, s.evidence_excerpt FROM records r JOIN record_sources s ON s.record_id = r.id
      WHERE r.status = 'approved' AND s.evidence_excerpt IS NOT NULL AND ($1::int IS NULL OR r.collection_id = $1::int)`,
    [collection],
  );
  const checks = await latestChecks(sql, sources);
  const counts: AnalyticsResult['evidence'] = {};
  for (const source of sources) {
    const status = checks.get(checkKey(source.url, source.evidence_excerpt))?.status ?? 'unchecked';
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

/** One source's check may take this long (every redirect and the body) and read this much. */
export const VERIFY_LIMITS = { deadlineMs: 20_000, maxBytes: 8 * 1024 * 1024 } as const;

async function verify(deps: AdminDeps, ids: readonly string[]): Promise<VerifyResult> {
  const fetcher = deps.fetcher ?? new UntrustedFetcher(deps.sourcesPrivateAddresses ? { allowAddress: () => true } : {});
  const sources = await sourcesToVerify(deps.sql, ids);
  const results = await verifySources(deps.sql, fetcher, sources, VERIFY_LIMITS);
  const counts: Partial<Record<SourceCheckStatus, number>> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return {
    checked: results.length,
    counts,
    sources: results.map((r) => ({ slugs: r.slugs, url: r.url, status: r.status, detail: r.detail, closest: r.closest, similarity: r.similarity })),
  };
}

/** `analytics.report`: the report, plus how many old search events the retention just deleted. */
export interface AnalyticsResult extends AnalyticsReport {
  purged: number;
  retention_days: number;
  /** How the approved records' quoted sources stand: each newest check's status, or `unchecked`. */
  evidence: Partial<Record<SourceCheckStatus | 'unchecked', number>>;
}

export interface ImportResult extends ImportSummary {
  /** Records embedded after the import committed, or why they could not be. */
  embedding: { embedded: number; skipped_reason?: string };
  /** The gate report of each record the import published or would publish. */
  gates: readonly GateReport[];
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

const rulesOf = (deps: AdminDeps): ReviewRules => deps.review ?? readReviewRules(process.env);

function reviewOptions(deps: AdminDeps, command: { reviewer: string; overrides: ReviewOptions['overrides'] }): ReviewOptions {
  return { rules: rulesOf(deps), reviewer: command.reviewer, overrides: command.overrides };
}

/** The gate report of files not imported yet, or of stored records (their pending revision, else their text). */
async function recordGates(deps: AdminDeps, command: { ids?: string[]; records?: unknown[]; where?: string[] }): Promise<GateReport[]> {
  if ((command.ids?.length ?? 0) > 0 === (command.records?.length ?? 0) > 0) {
    throw new ValidationError('Give either record slugs or ids, or record files; not both, and not neither.');
  }
  const where = command.where;
  const records = command.ids?.length
    ? (await reviewableRecords(deps.sql, command.ids)).flatMap((found) => (found.record ? [found.record] : []))
    : await validateRecords(command.records!, (i) => where?.[i] ?? `record ${i + 1}`);
  return gateReports(deps.sql, records, rulesOf(deps));
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
    case 'keys.list':
    case 'keys.revoke':
    case 'keys.set_quota':
    case 'keys.scope':
    case 'keys.scopes_available':
      return runKeysCommand(deps, keys, command);
    case 'records.import': {
      const where = command.where;
      const records = await validateRecords(command.records, (i) => where?.[i] ?? `record ${i + 1}`);
      const { summary, gates } = await importReviewed(deps.sql, records, command.approve, { ...reviewOptions(deps, command), collection: command.collection });
      return { ...summary, gates, embedding: await embedChanged(deps, summary.changed_ids) } satisfies ImportResult;
    }
    case 'embeddings.backfill':
      return backfill(deps, command.force, command.dry_run);
    case 'records.list':
      return listRecords(deps.sql, { status: command.status, collection: command.collection, limit: command.limit });
    case 'records.approve': {
      const { ids, gates } = await approveStored(deps.sql, command.ids, reviewOptions(deps, command));
      return { changed: ids.length, gates, embedding: await embedChanged(deps, ids) };
    }
    case 'records.reject':
    case 'records.queue':
    case 'records.search':
      return runQueueCommand(deps, command);
    case 'records.deprecate': {
      const changed = await deprecateRecords(deps.sql, command.ids, { reason: command.reason, supersededBy: command.superseded_by });
      return { changed: changed.length };
    }
    case 'records.gates':
      return recordGates(deps, command);
    case 'records.show':
      return showRecord(deps.sql, command.id, command.version);
    case 'records.history':
      return recordHistory(deps.sql, command.id);
    case 'records.diff':
      return diffRecord(deps.sql, command.id, command.from, command.to);
    case 'records.stale':
      return staleRecords(deps.sql, rulesOf(deps));
    case 'records.verify':
      return verify(deps, command.ids);
    case 'policy.list':
      return {
        policy: await effectivePolicy(deps.sql),
        added: await storePolicyEntries(deps.sql),
        synonyms: { defaults: Object.fromEntries(DEFAULT_SYNONYMS), added: await storeSynonyms(deps.sql) },
      };
    case 'policy.synonym':
      return { synonyms: await changeSynonym(deps.sql, command) };
    case 'relevance.list':
    case 'relevance.replay':
    case 'relevance.save':
    case 'relevance.remove':
      return runRelevanceCommand(deps, command);
    case 'policy.change':
      return { added: await changePolicy(deps.sql, command) };
    case 'feedback.list':
      return listFeedback(deps.sql, { category: command.category, reviewed: command.reviewed, limit: command.limit });
    case 'feedback.review':
      return markFeedbackReviewed(deps.sql, command.ids);
    case 'analytics.report':
      return analytics(deps, command.days, command.collection);
    case 'collections.create':
    case 'collections.list':
    case 'collections.rename':
    case 'records.move':
      return runCollectionCommand(deps.sql, command);
  }
}

type KeysCommand = Extract<z.output<typeof adminCommand>, { op: `keys.${string}` }>;

/**
 * Keys, with their scopes named (`key-scopes.ts`). A change a key cache could hold
 * (revocation, quota, scope) tells `keysChanged`, so the local server's cache forgets
 * at once; on AWS a warm gateway's cache lives its `keyCacheSeconds`.
 */
async function runKeysCommand(deps: AdminDeps, keys: KeyRepository, command: KeysCommand): Promise<unknown> {
  const one = async <T extends Parameters<typeof showKeys>[1][number]>(key: Promise<T>) => (await showKeys(deps.sql, [await key]))[0];
  switch (command.op) {
    case 'keys.create':
      return createScopedKey(deps.sql, keys, command);
    case 'keys.list':
      return showKeys(deps.sql, await keys.list());
    case 'keys.revoke':
      return one(keys.revoke(command.id)).finally(() => deps.keysChanged?.());
    case 'keys.set_quota':
      return one(keys.setDailyQuota(command.id, command.daily_quota)).finally(() => deps.keysChanged?.());
    case 'keys.scope':
      return changeKeyScope(deps.sql, keys, command).finally(() => deps.keysChanged?.());
    case 'keys.scopes_available':
      return availableScopes(deps.sql);
  }
}

async function analytics(deps: AdminDeps, days: number, collectionName: string | undefined): Promise<AnalyticsResult> {
  const retentionDays = deps.searchEventRetentionDays ?? settingDefault('searchEventRetentionDays');
  // An unknown name is refused before the retention deletes anything.
  const collection = await namedCollection(deps.sql, collectionName);
  const purged = await purgeSearchEvents(deps.sql, retentionDays);
  const report = await analyticsReport(deps.sql, { days, collection });
  return { ...report, purged, retention_days: retentionDays, evidence: await evidenceStanding(deps.sql, collection?.id ?? null) };
}

/** `records.search`'s answer: the explained search, and which collections it read (every one unless named). */
export interface OwnerSearchAnswer extends OwnerSearchResult {
  collections: SearchedCollections;
}

type QueueCommand = Extract<z.output<typeof adminCommand>, { op: 'records.reject' | 'records.queue' | 'records.search' }>;

/** What the review queue needs besides approving: the queue itself, rejecting, and an owner's explained search. */
async function runQueueCommand(deps: AdminDeps, command: QueueCommand): Promise<RejectResult | QueueItem[] | OwnerSearchAnswer> {
  switch (command.op) {
    case 'records.reject':
      return rejectRecords(deps.sql, command.ids, { reviewer: command.reviewer, reason: command.reason });
    case 'records.queue':
      return reviewQueue(deps.sql, rulesOf(deps));
    case 'records.search': {
      const { scope, searched } = await ownerSearchScope(deps.sql, command.collections);
      return { ...(await ownerSearch(deps, command.arguments, scope)), collections: searched };
    }
  }
}

type RelevanceCommand = Extract<z.output<typeof adminCommand>, { op: `relevance.${string}` }>;

/** The relevance profiles: which applies, replays for a calibration, storing and dropping a calibrated one. */
async function runRelevanceCommand(deps: AdminDeps, command: RelevanceCommand): Promise<unknown> {
  switch (command.op) {
    case 'relevance.list':
      return { active: profileNameOf(deps.embedder), profiles: await loadProfiles(deps.sql), defaults: DEFAULT_PROFILES, stored: await storedProfiles(deps.sql) };
    case 'relevance.replay':
      return replayQuestions(deps, command.questions, command.mode);
    case 'relevance.save':
      return { stored: await saveProfile(deps.sql, command.profile) };
    case 'relevance.remove':
      return { stored: await removeProfile(deps.sql, command.profile) };
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
