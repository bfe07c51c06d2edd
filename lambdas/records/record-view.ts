/**
 * Reads approved records with their applicability and sources, and shapes them
 * into the contract's result objects at the requested level of detail.
 */
import type { Sql } from '../ports/sql.ts';
import type { FullGuidanceResult, GuidanceResult } from '../../schema/tools.ts';

export interface AppliesTo {
  kind: string;
  name: string;
  version_constraint?: string;
}

export interface Source {
  title: string;
  url: string;
  publisher?: string;
  evidence_excerpt?: string;
  relation: string;
}

/** A record as stored, with everything any detail level may need. */
export interface StoredRecord {
  id: string;
  slug: string;
  status: string;
  title: string;
  topic: string;
  task_types: string[];
  summary: string | null;
  recommendation: string;
  rationale: string | null;
  conditions: string[];
  exceptions: string[];
  pitfalls: string[];
  verification_checks: string[];
  examples: string | null;
  confidence: 'high' | 'medium' | 'low';
  content_version: number;
  updated_at: string;
  approved_at: string | null;
  applies_to: AppliesTo[];
  sources: Source[];
}

export type Detail = 'brief' | 'standard' | 'full';

/** The columns and aggregated children every record read selects (alias `r`). */
export const RECORD_COLUMNS = `
  r.id::text AS id, r.slug, r.status, r.title, r.topic, r.task_types, r.summary, r.recommendation,
  r.rationale, r.conditions, r.exceptions, r.pitfalls, r.verification_checks, r.examples, r.confidence,
  r.content_version, r.updated_at, r.approved_at,
  (SELECT coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'kind', a.kind, 'name', a.name, 'version_constraint', a.version_constraint)) ORDER BY a.position), '[]'::jsonb)
     FROM record_applies_to a WHERE a.record_id = r.id) AS applies_to,
  (SELECT coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'title', s.title, 'url', s.url, 'publisher', s.publisher,
      'evidence_excerpt', s.evidence_excerpt, 'relation', s.relation)) ORDER BY s.position), '[]'::jsonb)
     FROM record_sources s WHERE s.record_id = r.id) AS sources`;

/** jsonb arrives parsed from PGlite and as text from some drivers; accept both. */
function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function textArray(value: unknown): string[] {
  if (Array.isArray(value)) return value as string[];
  if (typeof value === 'string') {
    // Postgres text[] literal, e.g. {build,debug}; task types never contain commas or quotes.
    const inner = value.replace(/^\{|\}$/g, '');
    return inner ? inner.split(',') : [];
  }
  return [];
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

export function toStoredRecord(row: Record<string, unknown>): StoredRecord {
  return {
    id: row.id as string,
    slug: row.slug as string,
    status: row.status as string,
    title: row.title as string,
    topic: row.topic as string,
    task_types: textArray(row.task_types),
    summary: (row.summary as string | null) ?? null,
    recommendation: row.recommendation as string,
    rationale: (row.rationale as string | null) ?? null,
    conditions: json<string[]>(row.conditions),
    exceptions: json<string[]>(row.exceptions),
    pitfalls: json<string[]>(row.pitfalls),
    verification_checks: json<string[]>(row.verification_checks),
    examples: (row.examples as string | null) ?? null,
    confidence: row.confidence as StoredRecord['confidence'],
    content_version: Number(row.content_version),
    updated_at: iso(row.updated_at)!,
    approved_at: iso(row.approved_at),
    applies_to: json<AppliesTo[]>(row.applies_to),
    sources: json<Source[]>(row.sources),
  };
}

/** Approved records whose id or slug is in `identifiers`, keyed by both. */
export async function findApprovedRecords(sql: Sql, identifiers: readonly string[]): Promise<Map<string, StoredRecord>> {
  const rows = await sql.query(
    `SELECT ${RECORD_COLUMNS} FROM records r
      WHERE r.status = 'approved'
        AND (r.slug IN (SELECT jsonb_array_elements_text($1::jsonb))
             OR r.id::text IN (SELECT jsonb_array_elements_text($1::jsonb)))`,
    [JSON.stringify(identifiers)],
  );
  const found = new Map<string, StoredRecord>();
  for (const row of rows) {
    const record = toStoredRecord(row);
    found.set(record.slug, record);
    found.set(record.id, record);
  }
  return found;
}

/** Approved records by id, in no particular order. */
export async function loadApprovedByIds(sql: Sql, ids: readonly string[]): Promise<StoredRecord[]> {
  if (ids.length === 0) return [];
  const rows = await sql.query(
    `SELECT ${RECORD_COLUMNS} FROM records r
      WHERE r.status = 'approved' AND r.id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)`,
    [JSON.stringify(ids)],
  );
  return rows.map(toStoredRecord);
}

const optional = <T>(value: T | null): T | undefined => (value === null || value === '' ? undefined : value);

/**
 * brief: what an agent needs to judge relevance; standard: adds the reasoning and
 * the checks; full (get_guidance): adds review metadata, version map and examples.
 */
export function shapeRecord(record: StoredRecord, detail: 'brief' | 'standard'): GuidanceResult;
export function shapeRecord(record: StoredRecord, detail: 'full'): FullGuidanceResult;
export function shapeRecord(record: StoredRecord, detail: Detail): GuidanceResult | FullGuidanceResult {
  const brief: GuidanceResult = {
    id: record.id,
    slug: record.slug,
    title: record.title,
    topic: record.topic,
    summary: optional(record.summary),
    recommendation: record.recommendation,
    applies_to: record.applies_to,
    confidence: record.confidence,
    updated_at: record.updated_at,
    sources: record.sources.map(({ title, url, publisher, relation }) => ({ title, url, publisher, relation })),
  };
  if (detail === 'brief') return brief;
  const standard: GuidanceResult = {
    ...brief,
    rationale: optional(record.rationale),
    conditions: record.conditions,
    exceptions: record.exceptions,
    pitfalls: record.pitfalls,
    verification_checks: record.verification_checks,
    sources: record.sources,
  };
  if (detail === 'standard') return standard;
  const versionConstraints: Record<string, string> = {};
  for (const a of record.applies_to) if (a.version_constraint) versionConstraints[a.name] = a.version_constraint;
  return {
    ...standard,
    status: record.status,
    content_version: record.content_version,
    approved_at: optional(record.approved_at),
    version_constraints: versionConstraints,
    examples: optional(record.examples),
  };
}
