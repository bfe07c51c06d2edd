/**
 * Imports validated records in one transaction: new slugs are inserted, changed
 * ones get a new content_version, unchanged ones are left alone. With `approve`
 * the records are published (approved) and their version is kept in history;
 * without it new records stay candidates, and changing an approved record is
 * refused so that unreviewed text can never reach the public endpoint.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import { ConflictError } from '../errors/app-error.ts';
import type { RecordFile, RecordStatus } from './record-schema.ts';
import { reindexRecord } from './bm25-index.ts';
import { canonicalTechnology } from './technology-vocabulary.ts';

export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  approved: number;
  candidates: number;
  deprecated: number;
  slugs: string[];
  /** Ids of the records that were created or changed (text or status). */
  changed_ids: string[];
}

export interface ImportOptions {
  /** Publish the imported records (owner review done). */
  readonly approve: boolean;
}

/** Hash of the fields a reader sees; review metadata is excluded. */
export function contentHash(record: RecordFile): string {
  const { id: _id, status: _status, updated_at: _updated, ...content } = record;
  return createHash('sha256').update(JSON.stringify(content)).digest('hex');
}

function targetStatus(record: RecordFile, approve: boolean): RecordStatus {
  if (record.status === 'deprecated') return 'deprecated';
  return approve ? 'approved' : 'candidate';
}

export async function importRecords(sql: Sql, records: readonly RecordFile[], options: ImportOptions): Promise<ImportSummary> {
  const summary: ImportSummary = {
    created: 0,
    updated: 0,
    unchanged: 0,
    approved: 0,
    candidates: 0,
    deprecated: 0,
    slugs: [],
    changed_ids: [],
  };
  await sql.transaction(async (tx) => {
    for (const record of records) {
      const outcome = await importOne(tx, record, options.approve);
      summary[outcome.change] += 1;
      summary[outcome.status === 'candidate' ? 'candidates' : outcome.status] += 1;
      summary.slugs.push(record.slug);
      if (outcome.change !== 'unchanged') summary.changed_ids.push(outcome.id);
    }
  });
  return summary;
}

interface Existing {
  id: string;
  status: RecordStatus;
  content_hash: string;
}

interface Outcome {
  id: string;
  change: 'created' | 'updated' | 'unchanged';
  status: RecordStatus;
}

async function importOne(tx: Sql, record: RecordFile, approve: boolean): Promise<Outcome> {
  const hash = contentHash(record);
  const status = targetStatus(record, approve);
  const [existing] = await tx.query<Existing>('SELECT id::text AS id, status, content_hash FROM records WHERE slug = $1', [record.slug]);
  if (existing && record.id && existing.id !== record.id) {
    throw new ConflictError(`Record "${record.slug}" already exists with another id; nothing was imported.`, { slug: record.slug });
  }
  if (existing && existing.content_hash === hash) return importSameText(tx, existing, status, approve);
  if (existing && existing.status === 'approved' && status === 'candidate') {
    throw new ConflictError(
      `Record "${record.slug}" is approved; importing changed text needs --approve (owner review). Nothing was imported.`,
      { slug: record.slug },
    );
  }
  const id = existing?.id ?? record.id ?? randomUUID();
  await writeRecord(tx, id, record, status, hash, existing !== undefined);
  await writeChildren(tx, id, record);
  if (status === 'approved') await snapshot(tx, id);
  await reindexRecord(tx, id);
  return { id, change: existing ? 'updated' : 'created', status };
}

/** Same text as stored: only a status change (approval or deprecation) can apply. */
async function importSameText(tx: Sql, existing: Existing, status: RecordStatus, approve: boolean): Promise<Outcome> {
  if (existing.status === status || (!approve && status !== 'deprecated')) {
    return { id: existing.id, change: 'unchanged', status: existing.status };
  }
  await tx.query(
    `UPDATE records SET status = $2, approved_at = CASE WHEN $2 = 'approved' THEN now() ELSE approved_at END, updated_at = now()
      WHERE id::text = $1`,
    [existing.id, status],
  );
  if (status === 'approved') await snapshot(tx, existing.id);
  await reindexRecord(tx, existing.id);
  return { id: existing.id, change: 'updated', status };
}

/** Inserts the record, or replaces an existing one's text with a new content_version. */
async function writeRecord(tx: Sql, id: string, record: RecordFile, status: RecordStatus, hash: string, exists: boolean): Promise<void> {
  const params = [
    id,
    record.slug,
    status,
    record.title,
    record.topic,
    `{${record.task_types.join(',')}}`,
    record.summary ?? null,
    record.recommendation,
    record.rationale ?? null,
    JSON.stringify(record.conditions),
    JSON.stringify(record.exceptions),
    JSON.stringify(record.pitfalls),
    JSON.stringify(record.verification_checks),
    record.examples ?? null,
    record.confidence,
    hash,
    record.updated_at ?? null,
  ] as const;
  if (!exists) {
    await tx.query(
      `INSERT INTO records (id, slug, status, title, topic, task_types, summary, recommendation, rationale, conditions,
              exceptions, pitfalls, verification_checks, examples, confidence, content_hash, updated_at, approved_at)
       VALUES ($1::uuid, $2, $3, $4, $5, $6::text[], $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb, $13::jsonb, $14, $15, $16,
              coalesce($17::timestamptz, now()), CASE WHEN $3 = 'approved' THEN now() END)`,
      params,
    );
    return;
  }
  await tx.query(
    `UPDATE records SET slug = $2, status = $3, title = $4, topic = $5, task_types = $6::text[], summary = $7,
            recommendation = $8, rationale = $9, conditions = $10::jsonb, exceptions = $11::jsonb, pitfalls = $12::jsonb,
            verification_checks = $13::jsonb, examples = $14, confidence = $15, content_hash = $16,
            updated_at = coalesce($17::timestamptz, now()), content_version = content_version + 1,
            approved_at = CASE WHEN $3 = 'approved' THEN now() ELSE approved_at END
      WHERE id::text = $1`,
    params,
  );
  // The old text's passages no longer describe the record; it is re-embedded after commit.
  await tx.query('DELETE FROM record_passages WHERE record_id::text = $1', [id]);
  await tx.query('DELETE FROM record_applies_to WHERE record_id::text = $1', [id]);
  await tx.query('DELETE FROM record_sources WHERE record_id::text = $1', [id]);
}

/** The record's applicability (canonical technology names) and sources, in file order. */
async function writeChildren(tx: Sql, id: string, record: RecordFile): Promise<void> {
  for (const [position, a] of record.applies_to.entries()) {
    await tx.query(
      'INSERT INTO record_applies_to (record_id, position, kind, name, version_constraint) VALUES ($1::uuid, $2, $3, $4, $5)',
      [id, position, a.kind, canonicalTechnology(a.name), a.version_constraint ?? null],
    );
  }
  for (const [position, s] of record.sources.entries()) {
    await tx.query(
      `INSERT INTO record_sources (record_id, position, title, url, publisher, evidence_excerpt, relation)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7)`,
      [id, position, s.title, s.url, s.publisher ?? null, s.evidence_excerpt ?? null, s.relation],
    );
  }
}

/** Keeps the approved text of this content_version (once). */
export async function snapshot(tx: Sql, id: string): Promise<void> {
  await tx.query(
    `INSERT INTO record_history (record_id, content_version, snapshot)
     SELECT r.id, r.content_version, to_jsonb(r) - 'search_vector'
       FROM records r WHERE r.id::text = $1
     ON CONFLICT (record_id, content_version) DO NOTHING`,
    [id],
  );
}
