/**
 * Reads approved records with their applicability and sources: the stored form
 * every detail level is shaped from (`record-shape.ts`). Candidates and deprecated
 * records are never read here, so they cannot reach a tool.
 */
import type { Sql } from '../ports/sql.ts';
import type { RecordStatus } from './record-schema.ts';
import { recordIdsParam, textSet, uuidSet } from './record-identifiers.ts';

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
  status: RecordStatus;
  title: string;
  topic: string;
  task_types: string[];
  summary: string | null;
  /** How agents ask for it (never shown in search results; get_guidance at detail "full" only). */
  asked_as: string[];
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
  /** Whether a source's newest check since the approval found its excerpt gone from the page. */
  evidence_drifted: boolean;
}

/** The columns and aggregated children every record read selects (alias `r`). */
const RECORD_COLUMNS = `
  r.id::text AS id, r.slug, r.status, r.title, r.topic, r.task_types, r.summary, r.asked_as, r.recommendation,
  r.rationale, r.conditions, r.exceptions, r.pitfalls, r.verification_checks, r.examples, r.confidence,
  r.content_version, r.updated_at, r.approved_at,
  (SELECT coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'kind', a.kind, 'name', a.name, 'version_constraint', a.version_constraint)) ORDER BY a.position), '[]'::jsonb)
     FROM record_applies_to a WHERE a.record_id = r.id) AS applies_to,
  (SELECT coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'title', s.title, 'url', s.url, 'publisher', s.publisher,
      'evidence_excerpt', s.evidence_excerpt, 'relation', s.relation)) ORDER BY s.position), '[]'::jsonb)
     FROM record_sources s WHERE s.record_id = r.id) AS sources,
  EXISTS (SELECT 1 FROM record_sources s
            CROSS JOIN LATERAL (SELECT c.status, c.checked_at FROM source_checks c
                                 WHERE c.url = s.url AND c.excerpt_hash = s.excerpt_hash
                                 ORDER BY c.checked_at DESC LIMIT 1) newest
           WHERE s.record_id = r.id AND newest.status = 'drifted'
             AND (r.approved_at IS NULL OR newest.checked_at > r.approved_at)) AS evidence_drifted`;

/** The jsonb columns of `RECORD_COLUMNS`, which the Sql adapter returns parsed. */
const JSON_COLUMNS = ['asked_as', 'conditions', 'exceptions', 'pitfalls', 'verification_checks', 'applies_to', 'sources'] as const;

async function selectApproved(sql: Sql, condition: string, params: readonly string[]): Promise<StoredRecord[]> {
  return sql.query<StoredRecord>(`SELECT ${RECORD_COLUMNS} FROM records r WHERE r.status = 'approved' AND ${condition}`, params, {
    json: JSON_COLUMNS,
  });
}

/** `$n` as the caller's collection ids (a jsonb array), which a record must be in to be seen. */
const inCollections = (n: number, alias = 'r') => `${alias}.collection_id = ANY (ARRAY(SELECT jsonb_array_elements_text($${n}::jsonb)::int))`;

/** `$1` the identifiers as slugs, `$2` those that are uuids as ids: each probes its own index. */
const BY_SLUG_OR_ID = `(r.slug = ANY (${textSet(1)}) OR r.id = ANY (${uuidSet(2)}))`;
const slugOrIdParams = (identifiers: readonly string[]) => [JSON.stringify(identifiers), recordIdsParam(identifiers)];

/** Approved records of these collections whose id or slug is in `identifiers`, keyed by both (a record in another collection reads as unknown). */
export async function findApprovedRecords(sql: Sql, identifiers: readonly string[], collections: readonly number[]): Promise<Map<string, StoredRecord>> {
  const records = await selectApproved(sql, `${BY_SLUG_OR_ID} AND ${inCollections(3)}`, [...slugOrIdParams(identifiers), JSON.stringify(collections)]);
  const found = new Map<string, StoredRecord>();
  for (const record of records) {
    found.set(record.slug, record);
    found.set(record.id, record);
  }
  return found;
}

/** Approved records by id, in no particular order. */
export async function loadApprovedByIds(sql: Sql, ids: readonly string[]): Promise<StoredRecord[]> {
  if (ids.length === 0) return [];
  return selectApproved(sql, `r.id = ANY (${uuidSet(1)})`, [JSON.stringify(ids)]);
}

/**
 * For identifiers of deprecated records that name an approved successor: the
 * successor's slug, keyed by the identifier as asked (slug or id). Both must be in
 * the caller's collections: otherwise the identifier reads as unknown.
 */
export async function findSuccessors(sql: Sql, identifiers: readonly string[], collections: readonly number[]): Promise<Map<string, string>> {
  if (identifiers.length === 0) return new Map();
  const rows = await sql.query<{ slug: string; id: string; successor: string }>(
    `SELECT r.slug, r.id::text AS id, s.slug AS successor
       FROM records r JOIN records s ON s.id = r.superseded_by
      WHERE r.status = 'deprecated' AND s.status = 'approved'
        AND ${BY_SLUG_OR_ID} AND ${inCollections(3)} AND ${inCollections(3, 's')}`,
    [...slugOrIdParams(identifiers), JSON.stringify(collections)],
  );
  const found = new Map<string, string>();
  for (const row of rows) {
    if (identifiers.includes(row.slug)) found.set(row.slug, row.successor);
    if (identifiers.includes(row.id)) found.set(row.id, row.successor);
  }
  return found;
}

export interface Coverage {
  /** Approved records per technology (canonical name). */
  technologies: Map<string, number>;
  /** Approved records per topic. */
  topics: Map<string, number>;
}

/** How many approved records of these collections each technology and topic has: what they cover. */
export async function approvedCoverage(sql: Sql, collections: readonly number[]): Promise<Coverage> {
  const rows = await sql.query<{ kind: string; name: string; n: number }>(
    `WITH visible AS (SELECT r.id, r.topic FROM records r
                       WHERE r.status = 'approved' AND r.collection_id = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb)::int)))
     SELECT 'technology' AS kind, a.name, count(DISTINCT a.record_id)::int AS n
       FROM record_applies_to a JOIN visible v ON v.id = a.record_id GROUP BY a.name
     UNION ALL
     SELECT 'topic', topic, count(*)::int FROM visible GROUP BY topic`,
    [JSON.stringify(collections)],
  );
  const pick = (kind: string) => new Map(rows.filter((r) => r.kind === kind).map((r) => [r.name, r.n]));
  return { technologies: pick('technology'), topics: pick('topic') };
}
