/**
 * What an owner reads about one record: the version served (or any approved
 * version), who approved each version with which gate report and overrides, the
 * revision waiting for review, the deprecation and its successor, the record's
 * collection and its moves between collections, and a
 * field-by-field diff between any two of those texts (`records show`, `records
 * history`, `records diff`).
 */
import { diffArrays, diffWords } from 'diff';
import type { Sql } from '../ports/sql.ts';
import { NotFoundError } from '../errors/app-error.ts';
import type { RecordFile } from './record-schema.ts';
import { asRecordId } from './record-identifiers.ts';
import { checkKey, latestChecks } from './source-verification.ts';
import { rejectionsOf, type RejectionEntry } from './record-rejection.ts';

interface RecordRow {
  id: string;
  slug: string;
  status: string;
  content_version: number;
  updated_at: string;
  approved_at: string | null;
  reviewed_at: string | null;
  license: string | null;
  deprecated_at: string | null;
  deprecation_reason: string | null;
  successor: string | null;
  file: string | null;
  revision: string | null;
  revision_staged_at: string | null;
  snapshot_fallback: Record<string, unknown>;
  collection: string;
}

/** One move of a record between collections: a reviewed change (`record-move.ts`). */
export interface MoveEntry {
  from: string;
  to: string;
  reviewer: string;
  reason: string;
  moved_at: string;
}

export interface VersionRow {
  content_version: number;
  approved_by: string | null;
  approved_at: string;
  gate_report: { verdict: string; gates: { code: string; verdict: string; message: string }[] } | null;
  overrides: { gate: string; reason: string }[];
  snapshot: Record<string, unknown>;
}

/** The fields of a stored row that make up a record's text, for versions kept before files were stored. */
const TEXT_FIELDS = [
  'slug', 'title', 'topic', 'task_types', 'summary', 'recommendation', 'rationale', 'conditions', 'exceptions',
  'pitfalls', 'verification_checks', 'confidence', 'examples', 'license', 'reviewed_at',
] as const;

function textOf(snapshot: Record<string, unknown>): Record<string, unknown> {
  if (typeof snapshot.file === 'string') return JSON.parse(snapshot.file) as Record<string, unknown>;
  return Object.fromEntries(TEXT_FIELDS.filter((f) => snapshot[f] !== null && snapshot[f] !== undefined).map((f) => [f, snapshot[f]]));
}

async function loadRecord(sql: Sql, identifier: string): Promise<RecordRow> {
  const [row] = await sql.query<RecordRow>(
    `SELECT r.id::text AS id, r.slug, r.status, r.content_version, r.updated_at, r.approved_at, r.reviewed_at::text AS reviewed_at,
            r.license, r.deprecated_at, r.deprecation_reason, s.slug AS successor, r.file,
            v.content AS revision, v.staged_at AS revision_staged_at,
            to_jsonb(r) - 'search_vector' - 'file' AS snapshot_fallback, c.name AS collection
       FROM records r JOIN collections c ON c.id = r.collection_id
            LEFT JOIN record_revisions v ON v.record_id = r.id LEFT JOIN records s ON s.id = r.superseded_by
      WHERE r.slug = $1 OR r.id = $2::uuid`,
    [identifier, asRecordId(identifier)],
    { json: ['snapshot_fallback'] },
  );
  if (!row) throw new NotFoundError(`No record has the slug or id ${identifier}.`, { identifier });
  return row;
}

async function loadVersions(sql: Sql, id: string): Promise<VersionRow[]> {
  return sql.query<VersionRow>(
    `SELECT content_version, approved_by, recorded_at AS approved_at, gate_report, overrides, snapshot
       FROM record_history WHERE record_id = $1::uuid ORDER BY content_version`,
    [id],
    { json: ['gate_report', 'overrides', 'snapshot'] },
  );
}

/** Every move of the record between collections, oldest first, by collection name. */
async function movesOf(sql: Sql, id: string): Promise<MoveEntry[]> {
  return sql.query<MoveEntry>(
    `SELECT f.name AS "from", t.name AS "to", m.reviewer, m.reason, m.moved_at
       FROM record_moves m JOIN collections f ON f.id = m.from_collection JOIN collections t ON t.id = m.to_collection
      WHERE m.record_id = $1::uuid ORDER BY m.moved_at, m.id`,
    [id],
  );
}

const approvalOf = (v: VersionRow | undefined) =>
  v && {
    content_version: v.content_version,
    approved_by: v.approved_by,
    approved_at: v.approved_at,
    verdict: v.gate_report?.verdict ?? null,
    gates: v.gate_report?.gates ?? [],
    overrides: v.overrides,
  };

/** A record as an owner reviews it: the served (or asked-for) version with its approval. */
export async function showRecord(sql: Sql, identifier: string, version?: number) {
  const row = await loadRecord(sql, identifier);
  const versions = await loadVersions(sql, row.id);
  const shown = version ?? row.content_version;
  const approved = versions.find((v) => v.content_version === shown);
  if (version !== undefined && !approved) {
    throw new NotFoundError(`${row.slug} has no approved version ${version} (approved versions: ${versions.map((v) => v.content_version).join(', ') || 'none'}).`);
  }
  const record = approved && shown !== row.content_version ? textOf(approved.snapshot) : row.file ? JSON.parse(row.file) : textOf(row.snapshot_fallback);
  const sources = (record as RecordFile).sources ?? [];
  const checks = await latestChecks(sql, sources);
  return {
    id: row.id,
    slug: row.slug,
    status: row.status,
    content_version: row.content_version,
    shown_version: shown,
    /** The collection the record is in now (whichever version is shown). */
    collection: row.collection,
    updated_at: row.updated_at,
    reviewed_at: row.reviewed_at,
    license: row.license,
    record: record as RecordFile,
    approval: approvalOf(approved) ?? null,
    pending_revision: row.revision_staged_at ? { staged_at: row.revision_staged_at } : null,
    deprecation: row.deprecated_at ? { deprecated_at: row.deprecated_at, reason: row.deprecation_reason, superseded_by: row.successor } : null,
    /** The newest check of each source's excerpt against its page, in source order; null when never checked. */
    source_checks: sources.map((s) => (s.evidence_excerpt ? (checks.get(checkKey(s.url, s.evidence_excerpt)) ?? null) : null)),
    moves: await movesOf(sql, row.id),
  };
}

/** `records.show`'s answer, as the CLI and the console read it. */
export type ShownRecord = Awaited<ReturnType<typeof showRecord>>;

/** `records.history`: a record's approvals, its pending revision, its deprecation and what was rejected. */
export interface RecordHistory {
  id: string;
  slug: string;
  /** The record's status, or `rejected` for a candidate that was rejected (it is no longer in the store). */
  status: string;
  content_version: number;
  /** The collection the record is in now; null for a rejected candidate no longer stored. */
  collection: string | null;
  versions: NonNullable<ReturnType<typeof approvalOf>>[];
  pending_revision: { staged_at: string } | null;
  deprecation: { deprecated_at: string; reason: string | null; superseded_by: string | null } | null;
  /** Every rejected candidate text or revision of this record (or of its slug), oldest first: who, why, when. */
  rejections: RejectionEntry[];
  /** Every move between collections, oldest first: from, to, who, why, when. */
  moves: MoveEntry[];
}

/** Every approved version with its approval, then the pending revision, the deprecation and the rejections. */
export async function recordHistory(sql: Sql, identifier: string): Promise<RecordHistory> {
  const row = await loadRecord(sql, identifier).catch(async (error: unknown) => {
    if (!(error instanceof NotFoundError)) throw error;
    return rejectedCandidate(sql, identifier, error);
  });
  if ('rejections' in row) return row;
  const versions = await loadVersions(sql, row.id);
  return {
    id: row.id,
    slug: row.slug,
    status: row.status,
    content_version: row.content_version,
    collection: row.collection,
    versions: versions.map((v) => approvalOf(v)!),
    pending_revision: row.revision_staged_at ? { staged_at: row.revision_staged_at } : null,
    deprecation: row.deprecated_at ? { deprecated_at: row.deprecated_at, reason: row.deprecation_reason, superseded_by: row.successor } : null,
    rejections: await rejectionsOf(sql, { id: row.id, slug: row.slug }),
    moves: await movesOf(sql, row.id),
  };
}

/** The history of a candidate that was rejected and left the store, or the `NotFoundError` when none was. */
async function rejectedCandidate(sql: Sql, identifier: string, notFound: NotFoundError): Promise<RecordHistory> {
  const [last] = await sql.query<{ id: string; slug: string }>(
    `SELECT record_id::text AS id, slug FROM record_rejections WHERE slug = $1 OR record_id = $2::uuid ORDER BY rejected_at DESC, record_rejections.id DESC LIMIT 1`,
    [identifier, asRecordId(identifier)],
  );
  if (!last) throw notFound;
  const rejections = await rejectionsOf(sql, last);
  return { id: last.id, slug: last.slug, status: 'rejected', content_version: 0, collection: null, versions: [], pending_revision: null, deprecation: null, rejections, moves: [] };
}

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  /** Words removed as `[-…-]` and added as `{+…+}`, or one `- item` / `+ item` line per list item. */
  diff: string;
}

function describe(before: unknown, after: unknown): string {
  if ((typeof before === 'string' || before === undefined) && (typeof after === 'string' || after === undefined)) {
    return diffWords(before ?? '', after ?? '')
      .map((part) => (part.added ? `{+${part.value}+}` : part.removed ? `[-${part.value}-]` : part.value))
      .join('');
  }
  const items = (value: unknown) => (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  return diffArrays(items(before), items(after))
    .flatMap((part) => (part.added || part.removed ? part.value.map((item) => `${part.added ? '+' : '-'} ${item}`) : []))
    .join('\n');
}

/** Field-by-field changes from one text to another (fields in the order the newer text gives them). */
export function diffTexts(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  const fields = [...new Set([...Object.keys(after), ...Object.keys(before)])].filter((f) => f !== 'id' && f !== 'status');
  return fields
    .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]))
    .map((field) => ({ field, before: before[field], after: after[field], diff: describe(before[field], after[field]) }));
}

type VersionRef = number | 'pending';

/** `records.diff`'s answer. */
export type RecordDiff = Awaited<ReturnType<typeof diffRecord>>;

/**
 * Changes between two versions of a record (numbers, or `pending` for the revision
 * waiting for review). Without both: the served version against the pending
 * revision if there is one, else the last two approved versions.
 */
export async function diffRecord(sql: Sql, identifier: string, from?: VersionRef, to?: VersionRef) {
  const row = await loadRecord(sql, identifier);
  const versions = await loadVersions(sql, row.id);
  const latest = versions.at(-1)?.content_version;
  if (from === undefined && !row.revision && versions.length < 2) {
    throw new NotFoundError(`${row.slug} has one approved version and no revision waiting; there is nothing to compare yet.`);
  }
  const a = from ?? (row.revision ? row.content_version : (latest ?? 1) - 1);
  const b = to ?? (row.revision ? 'pending' : (latest ?? 1));
  const text = (ref: VersionRef): Record<string, unknown> => {
    if (ref === 'pending') {
      if (!row.revision) throw new NotFoundError(`${row.slug} has no revision waiting for review.`);
      return JSON.parse(row.revision) as Record<string, unknown>;
    }
    const version = versions.find((v) => v.content_version === ref);
    if (version) return textOf(version.snapshot);
    if (ref === row.content_version) return row.file ? (JSON.parse(row.file) as Record<string, unknown>) : textOf(row.snapshot_fallback);
    throw new NotFoundError(`${row.slug} has no version ${ref} to compare (approved versions: ${versions.map((v) => v.content_version).join(', ') || 'none'}).`);
  };
  return { slug: row.slug, from: a, to: b, changes: diffTexts(text(a), text(b)) };
}
