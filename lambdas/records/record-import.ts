/**
 * Imports validated records in one transaction: new slugs are inserted, changed
 * ones get a new content_version, unchanged ones are left alone. With `approve`
 * the records are published (approved) and their version is kept in history;
 * without it new records stay candidates, and changing an approved record is
 * refused so that unreviewed text can never reach the public endpoint.
 *
 * The work is set-based, in chunks of `CHUNK` records: a handful of statements per
 * chunk whatever its content (records, their applicability and sources, history,
 * BM25 statistics), not a dozen per record. A 2,000-record import is then seconds,
 * not most of a minute, which is how long searches wait for it: readers see the
 * corpus before the import or after it, never between (one transaction).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Sql } from '../ports/sql.ts';
import { ConflictError } from '../errors/app-error.ts';
import type { RecordFile, RecordStatus } from './record-schema.ts';
import { reindexRecords } from './bm25-index.ts';
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

/** Records per set of statements: bounded statements, and bounded parameters for the Data API. */
const CHUNK = 100;

/** Hash of the fields a reader sees; review metadata is excluded. */
export function contentHash(record: RecordFile): string {
  const { id: _id, status: _status, updated_at: _updated, ...content } = record;
  return createHash('sha256').update(JSON.stringify(content)).digest('hex');
}

function targetStatus(record: RecordFile, approve: boolean): RecordStatus {
  if (record.status === 'deprecated') return 'deprecated';
  return approve ? 'approved' : 'candidate';
}

interface Existing {
  id: string;
  slug: string;
  status: RecordStatus;
  content_hash: string;
}

/** What the import does with one record. */
interface Plan {
  readonly record: RecordFile;
  readonly id: string;
  readonly hash: string;
  readonly status: RecordStatus;
  /** insert: new slug; rewrite: changed text; status: same text, new status; keep: nothing to do. */
  readonly action: 'insert' | 'rewrite' | 'status' | 'keep';
}

export async function importRecords(sql: Sql, records: readonly RecordFile[], options: ImportOptions): Promise<ImportSummary> {
  const seen = new Set<string>();
  for (const record of records) {
    if (seen.has(record.slug)) throw new ConflictError(`Record "${record.slug}" appears twice; nothing was imported.`, { slug: record.slug });
    seen.add(record.slug);
  }
  const summary: ImportSummary = { created: 0, updated: 0, unchanged: 0, approved: 0, candidates: 0, deprecated: 0, slugs: [], changed_ids: [] };
  await sql.transaction(async (tx) => {
    for (let start = 0; start < records.length; start += CHUNK) {
      const plans = await planChunk(tx, records.slice(start, start + CHUNK), options.approve);
      await applyChunk(tx, plans);
      for (const plan of plans) tally(summary, plan);
    }
  });
  return summary;
}

function tally(summary: ImportSummary, plan: Plan): void {
  summary[plan.action === 'insert' ? 'created' : plan.action === 'keep' ? 'unchanged' : 'updated'] += 1;
  summary[plan.status === 'candidate' ? 'candidates' : plan.status] += 1;
  summary.slugs.push(plan.record.slug);
  if (plan.action !== 'keep') summary.changed_ids.push(plan.id);
}

/** Compares a chunk with the store and decides each record's action; refuses the whole import on a conflict. */
async function planChunk(tx: Sql, records: readonly RecordFile[], approve: boolean): Promise<Plan[]> {
  const rows = await tx.query<Existing>(
    'SELECT id::text AS id, slug, status, content_hash FROM records WHERE slug IN (SELECT jsonb_array_elements_text($1::jsonb))',
    [JSON.stringify(records.map((r) => r.slug))],
  );
  const existing = new Map(rows.map((row) => [row.slug, row]));
  return records.map((record) => {
    const hash = contentHash(record);
    const status = targetStatus(record, approve);
    const found = existing.get(record.slug);
    if (!found) return { record, id: record.id ?? randomUUID(), hash, status, action: 'insert' };
    if (record.id && found.id !== record.id) {
      throw new ConflictError(`Record "${record.slug}" already exists with another id; nothing was imported.`, { slug: record.slug });
    }
    if (found.content_hash === hash) {
      const changes = found.status !== status && (approve || status === 'deprecated');
      return { record, id: found.id, hash, status: changes ? status : found.status, action: changes ? 'status' : 'keep' };
    }
    if (found.status === 'approved' && status === 'candidate') {
      throw new ConflictError(
        `Record "${record.slug}" is approved; importing changed text needs --approve (owner review). Nothing was imported.`,
        { slug: record.slug },
      );
    }
    return { record, id: found.id, hash, status, action: 'rewrite' };
  });
}

/** The columns of a record row, as `jsonb_to_recordset` reads them. */
const RECORD_SET = `jsonb_to_recordset($1::jsonb) AS x(id uuid, slug text, status text, title text, topic text, task_types text[],
  summary text, recommendation text, rationale text, conditions jsonb, exceptions jsonb, pitfalls jsonb, verification_checks jsonb,
  examples text, confidence text, content_hash text, updated_at timestamptz)`;

function recordRow(plan: Plan): Record<string, unknown> {
  const r = plan.record;
  return {
    id: plan.id,
    slug: r.slug,
    status: plan.status,
    title: r.title,
    topic: r.topic,
    task_types: r.task_types,
    summary: r.summary ?? null,
    recommendation: r.recommendation,
    rationale: r.rationale ?? null,
    conditions: r.conditions,
    exceptions: r.exceptions,
    pitfalls: r.pitfalls,
    verification_checks: r.verification_checks,
    examples: r.examples ?? null,
    confidence: r.confidence,
    content_hash: plan.hash,
    updated_at: r.updated_at ?? null,
  };
}

async function applyChunk(tx: Sql, plans: readonly Plan[]): Promise<void> {
  const of = (action: Plan['action']) => plans.filter((p) => p.action === action);
  const inserts = of('insert');
  const rewrites = of('rewrite');
  const statuses = of('status');
  if (inserts.length > 0) {
    await tx.query(
      `INSERT INTO records (id, slug, status, title, topic, task_types, summary, recommendation, rationale, conditions,
              exceptions, pitfalls, verification_checks, examples, confidence, content_hash, updated_at, approved_at)
       SELECT x.id, x.slug, x.status, x.title, x.topic, x.task_types, x.summary, x.recommendation, x.rationale, x.conditions,
              x.exceptions, x.pitfalls, x.verification_checks, x.examples, x.confidence, x.content_hash,
              coalesce(x.updated_at, now()), CASE WHEN x.status = 'approved' THEN now() END
         FROM ${RECORD_SET}`,
      [JSON.stringify(inserts.map(recordRow))],
    );
  }
  if (rewrites.length > 0) await rewriteRecords(tx, rewrites);
  if (statuses.length > 0) {
    await tx.query(
      `UPDATE records r SET status = x.status, updated_at = now(),
              approved_at = CASE WHEN x.status = 'approved' THEN now() ELSE r.approved_at END
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, status text) WHERE r.id = x.id`,
      [JSON.stringify(statuses.map((p) => ({ id: p.id, status: p.status })))],
    );
  }
  await writeChildren(tx, [...inserts, ...rewrites]);
  const changed = plans.filter((p) => p.action !== 'keep');
  await snapshot(tx, changed.filter((p) => p.status === 'approved').map((p) => p.id));
  await reindexRecords(tx, changed.map((p) => p.id));
}

/** Replaces changed records' text with a new content_version; their old passages and children go. */
async function rewriteRecords(tx: Sql, rewrites: readonly Plan[]): Promise<void> {
  await tx.query(
    `UPDATE records r SET slug = x.slug, status = x.status, title = x.title, topic = x.topic, task_types = x.task_types,
            summary = x.summary, recommendation = x.recommendation, rationale = x.rationale, conditions = x.conditions,
            exceptions = x.exceptions, pitfalls = x.pitfalls, verification_checks = x.verification_checks, examples = x.examples,
            confidence = x.confidence, content_hash = x.content_hash, updated_at = coalesce(x.updated_at, now()),
            content_version = r.content_version + 1,
            approved_at = CASE WHEN x.status = 'approved' THEN now() ELSE r.approved_at END
       FROM ${RECORD_SET} WHERE r.id = x.id`,
    [JSON.stringify(rewrites.map(recordRow))],
  );
  const ids = [JSON.stringify(rewrites.map((p) => p.id))];
  // The old text's passages no longer describe the record; it is re-embedded after commit.
  for (const table of ['record_passages', 'record_applies_to', 'record_sources']) {
    await tx.query(`DELETE FROM ${table} WHERE record_id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)`, ids);
  }
}

/** The records' applicability (canonical technology names) and sources, in file order. */
async function writeChildren(tx: Sql, plans: readonly Plan[]): Promise<void> {
  const applies = plans.flatMap((p) =>
    p.record.applies_to.map((a, position) => ({ record_id: p.id, position, kind: a.kind, name: canonicalTechnology(a.name), version_constraint: a.version_constraint ?? null })),
  );
  if (applies.length > 0) {
    await tx.query(
      `INSERT INTO record_applies_to (record_id, position, kind, name, version_constraint)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(record_id uuid, position int, kind text, name text, version_constraint text)`,
      [JSON.stringify(applies)],
    );
  }
  const sources = plans.flatMap((p) =>
    p.record.sources.map((s, position) => ({
      record_id: p.id,
      position,
      title: s.title,
      url: s.url,
      publisher: s.publisher ?? null,
      evidence_excerpt: s.evidence_excerpt ?? null,
      relation: s.relation,
    })),
  );
  if (sources.length > 0) {
    await tx.query(
      `INSERT INTO record_sources (record_id, position, title, url, publisher, evidence_excerpt, relation)
       SELECT * FROM jsonb_to_recordset($1::jsonb)
           AS x(record_id uuid, position int, title text, url text, publisher text, evidence_excerpt text, relation text)`,
      [JSON.stringify(sources)],
    );
  }
}

/** Keeps the approved text of each record's current content_version (once). */
export async function snapshot(tx: Sql, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `INSERT INTO record_history (record_id, content_version, snapshot)
     SELECT r.id, r.content_version, to_jsonb(r) - 'search_vector'
       FROM records r WHERE r.id IN (SELECT jsonb_array_elements_text($1::jsonb)::uuid)
     ON CONFLICT (record_id, content_version) DO NOTHING`,
    [JSON.stringify(ids)],
  );
}
