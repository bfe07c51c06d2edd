/**
 * Imports validated records in one transaction: new slugs are inserted, changed
 * ones get a new content_version, unchanged ones are left alone. With `approve`
 * the records are published (approved) and their version is kept in history with
 * who approved it, the gate report and any overrides (`record-approval.ts` runs
 * the gates first); without it new records stay candidates, and a changed text for
 * an approved record is staged as its pending revision (`record_revisions`) while
 * the approved version keeps serving, so unreviewed text never reaches an agent.
 *
 * `updated_at` is the time the served content last changed: the file's own
 * `updated_at` when it gives one, else the moment the new text was approved.
 * Status changes alone (deprecating, re-approving the same text) leave it be.
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
import { refreshPhraseMasses, reindexRecords } from './bm25-index.ts';
import { canonicalTechnology } from './technology-vocabulary.ts';
import { textFieldSet, textSet, uuidFieldSet, uuidSet } from './record-identifiers.ts';
import { PUBLIC_COLLECTION, collectionIds } from './collections.ts';
import { excerptHash } from './evidence-text.ts';

export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  approved: number;
  candidates: number;
  deprecated: number;
  /** Changed texts of approved records staged as pending revisions. */
  staged: number;
  slugs: string[];
  /** Ids of the records that were created or changed (text or status). */
  changed_ids: string[];
}

/** What an approval records beside the text: who, the gate report and the overrides, per slug. */
export interface Approval {
  readonly reviewer: string;
  readonly reports: ReadonlyMap<string, unknown>;
  readonly overrides: ReadonlyMap<string, readonly unknown[]>;
}

export interface ImportOptions {
  /** Publish the imported records (owner review done). */
  readonly approve: boolean;
  /** Stored with each approved version; absent for imports that approve nothing. */
  readonly approval?: Approval;
  /**
   * The collection new records go into, by name, unless a record names its own
   * (`collection` in the file). @default public. A record already stored stays in its
   * collection; naming another for it refuses the import (moving is a reviewed change:
   * `record-move.ts`).
   */
  readonly collection?: string;
}

/** Records per set of statements: bounded statements, and bounded parameters for the Data API. */
const CHUNK = 100;

/**
 * Records after which a long import refreshes the planner's statistics, then again
 * each time the count doubles (1,000, 2,000, 4,000…). The import's statements are
 * planned with the statistics its tables had when it began: into an empty store every
 * lookup was planned for empty tables, and one import of 20,000 records had not
 * finished after 26 minutes. ANALYZE inside the transaction counts the rows it has
 * written so far (and nothing outside it sees them until it commits). Doubling keeps
 * the refreshes to a handful however large the import.
 */
const ANALYZE_FIRST_AFTER = 1000;

/** Hash of the fields a reader sees; review metadata (status, dates, what it supersedes) is excluded. */
export function contentHash(record: RecordFile): string {
  const { id: _id, status: _status, updated_at: _updated, reviewed_at: _reviewed, supersedes: _supersedes, collection: _collection, ...content } = record;
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
  collection_id: number;
}

/** What the import does with one record. */
interface Plan {
  readonly record: RecordFile;
  readonly id: string;
  readonly hash: string;
  readonly status: RecordStatus;
  /** The collection a new record goes into (an existing one keeps its own). */
  readonly collectionId: number;
  /**
   * insert: new slug; rewrite: changed text; status: same text, new status; stage:
   * changed text of an approved record, kept as its pending revision; keep: nothing to do.
   */
  readonly action: 'insert' | 'rewrite' | 'status' | 'stage' | 'keep';
}

export async function importRecords(sql: Sql, records: readonly RecordFile[], options: ImportOptions): Promise<ImportSummary> {
  const seen = new Set<string>();
  for (const record of records) {
    if (seen.has(record.slug)) throw new ConflictError(`Record "${record.slug}" appears twice; nothing was imported.`, { slug: record.slug });
    seen.add(record.slug);
  }
  const summary: ImportSummary = { created: 0, updated: 0, unchanged: 0, approved: 0, candidates: 0, deprecated: 0, staged: 0, slugs: [], changed_ids: [] };
  await sql.transaction(async (tx) => {
    // Every collection named is resolved first: an unknown name refuses the import before anything is written.
    const fallback = options.collection ?? PUBLIC_COLLECTION;
    const ids = await collectionIds(tx, [fallback, ...records.flatMap((r) => (r.collection ? [r.collection] : []))]);
    const target = (record: RecordFile) => ({ id: ids.get(record.collection ?? fallback)!, named: record.collection ?? options.collection });
    let analyzeAt = ANALYZE_FIRST_AFTER;
    // Collections whose phrasing masses the import changed: recomputed once, at its end (bm25-index.ts).
    const masses = new Set<number>();
    for (let start = 0; start < records.length; start += CHUNK) {
      const plans = await planChunk(tx, records.slice(start, start + CHUNK), options.approve, target);
      await applyChunk(tx, plans, options, masses);
      for (const plan of plans) tally(summary, plan);
      if (start + CHUNK >= analyzeAt && start + CHUNK < records.length) {
        await tx.query('ANALYZE');
        analyzeAt *= 2;
      }
    }
    await refreshPhraseMasses(tx, masses);
  });
  return summary;
}

function tally(summary: ImportSummary, plan: Plan): void {
  if (plan.action === 'stage') summary.staged += 1;
  else summary[plan.action === 'insert' ? 'created' : plan.action === 'keep' ? 'unchanged' : 'updated'] += 1;
  summary[plan.status === 'candidate' ? 'candidates' : plan.status] += 1;
  summary.slugs.push(plan.record.slug);
  if (plan.action !== 'keep' && plan.action !== 'stage') summary.changed_ids.push(plan.id);
}

/** Compares a chunk with the store and decides each record's action; refuses the whole import on a conflict. */
async function planChunk(
  tx: Sql,
  records: readonly RecordFile[],
  approve: boolean,
  target: (record: RecordFile) => { id: number; named: string | undefined },
): Promise<Plan[]> {
  const rows = await tx.query<Existing>(
    `SELECT id::text AS id, slug, status, content_hash, collection_id FROM records WHERE slug = ANY (${textSet(1)})`,
    [JSON.stringify(records.map((r) => r.slug))],
  );
  const existing = new Map(rows.map((row) => [row.slug, row]));
  return records.map((record) => {
    const hash = contentHash(record);
    const status = targetStatus(record, approve);
    const found = existing.get(record.slug);
    const collection = target(record);
    if (!found) return { record, id: record.id ?? randomUUID(), hash, status, collectionId: collection.id, action: 'insert' };
    if (record.id && found.id !== record.id) {
      throw new ConflictError(`Record "${record.slug}" already exists with another id; nothing was imported.`, { slug: record.slug });
    }
    if (collection.named !== undefined && Number(found.collection_id) !== collection.id) {
      throw new ConflictError(
        `Record "${record.slug}" is stored in another collection than "${collection.named}"; nothing was imported. Moving a record is a reviewed change: \`chatctx records move ${record.slug} --to ${collection.named}\`.`,
        { slug: record.slug, collection: collection.named },
      );
    }
    const keep = { collectionId: Number(found.collection_id) };
    if (found.content_hash === hash) {
      const changes = found.status !== status && (approve || status === 'deprecated');
      return { record, id: found.id, hash, status: changes ? status : found.status, ...keep, action: changes ? 'status' : 'keep' };
    }
    if (found.status === 'approved' && status === 'candidate') return { record, id: found.id, hash, status: 'approved', ...keep, action: 'stage' };
    return { record, id: found.id, hash, status, ...keep, action: 'rewrite' };
  });
}

/** The columns of a record row, as `jsonb_to_recordset` reads them. */
const RECORD_SET = `jsonb_to_recordset($1::jsonb) AS x(id uuid, slug text, status text, title text, topic text, task_types text[],
  summary text, asked_as jsonb, recommendation text, rationale text, conditions jsonb, exceptions jsonb, pitfalls jsonb, verification_checks jsonb,
  examples text, confidence text, content_hash text, updated_at timestamptz, reviewed_at date, license text, supersedes jsonb, file text, collection_id int)`;

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
    asked_as: r.asked_as ?? [],
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
    reviewed_at: r.reviewed_at ?? null,
    license: r.license ?? null,
    supersedes: r.supersedes,
    file: JSON.stringify(r),
    collection_id: plan.collectionId,
  };
}

async function applyChunk(tx: Sql, plans: readonly Plan[], options: ImportOptions, masses: Set<number>): Promise<void> {
  const of = (action: Plan['action']) => plans.filter((p) => p.action === action);
  const inserts = of('insert');
  const rewrites = of('rewrite');
  if (inserts.length > 0) {
    await tx.query(
      `INSERT INTO records (id, slug, status, title, topic, task_types, summary, asked_as, recommendation, rationale, conditions,
              exceptions, pitfalls, verification_checks, examples, confidence, content_hash, updated_at, declared_updated_at,
              approved_at, reviewed_at, license, supersedes, file, deprecated_at, collection_id)
       SELECT x.id, x.slug, x.status, x.title, x.topic, x.task_types, x.summary, x.asked_as, x.recommendation, x.rationale, x.conditions,
              x.exceptions, x.pitfalls, x.verification_checks, x.examples, x.confidence, x.content_hash,
              coalesce(x.updated_at, now()), x.updated_at, CASE WHEN x.status = 'approved' THEN now() END,
              x.reviewed_at, x.license, x.supersedes, x.file, CASE WHEN x.status = 'deprecated' THEN now() END, x.collection_id
         FROM ${RECORD_SET}`,
      [JSON.stringify(inserts.map(recordRow))],
    );
  }
  if (rewrites.length > 0) await rewriteRecords(tx, rewrites);
  await setStatuses(tx, of('status').map((p) => ({ id: p.id, status: p.status, reviewed_at: p.record.reviewed_at ?? null })));
  await stageRevisions(tx, of('stage'));
  if (options.approve) await refreshReviews(tx, [...of('keep'), ...of('status')]);
  await writeChildren(tx, [...inserts, ...rewrites]);
  const changed = plans.filter((p) => p.action !== 'keep' && p.action !== 'stage');
  const approved = changed.filter((p) => p.status === 'approved');
  await snapshot(tx, approved.map((p) => p.id), options.approval, approved.map((p) => p.record.slug));
  await dropRevisions(tx, approved.map((p) => p.id));
  await reindexRecords(tx, changed.map((p) => p.id), masses);
  await retireSuperseded(tx, approved.filter((p) => p.record.supersedes.length > 0), masses);
}

/**
 * Status changes with the same text. Approving sets `updated_at` only when this
 * version was never served before (the file's declared time, else now); deprecating
 * leaves it and stamps `deprecated_at`.
 */
export async function setStatuses(tx: Sql, changes: readonly { id: string; status: RecordStatus; reviewed_at?: string | null; reason?: string | null }[]): Promise<void> {
  if (changes.length === 0) return;
  await tx.query(
    `UPDATE records r SET status = x.status,
            updated_at = CASE WHEN x.status = 'approved' AND NOT EXISTS (
                           SELECT 1 FROM record_history h WHERE h.record_id = r.id AND h.content_version = r.content_version)
                         THEN coalesce(r.declared_updated_at, now()) ELSE r.updated_at END,
            approved_at = CASE WHEN x.status = 'approved' THEN now() ELSE r.approved_at END,
            reviewed_at = CASE WHEN x.status = 'approved' THEN greatest(r.reviewed_at, x.reviewed_at) ELSE r.reviewed_at END,
            deprecated_at = CASE WHEN x.status = 'deprecated' THEN now() END,
            deprecation_reason = CASE WHEN x.status = 'deprecated' THEN x.reason END,
            superseded_by = CASE WHEN x.status = 'deprecated' THEN r.superseded_by END
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, status text, reviewed_at date, reason text)
      WHERE r.id = x.id AND r.id = ANY (${uuidFieldSet(1, 'id')})`,
    [JSON.stringify(changes)],
  );
}

/** Replaces changed records' text with a new content_version; their old passages and children go. */
async function rewriteRecords(tx: Sql, rewrites: readonly Plan[]): Promise<void> {
  await tx.query(
    `UPDATE records r SET slug = x.slug, status = x.status, title = x.title, topic = x.topic, task_types = x.task_types,
            summary = x.summary, asked_as = x.asked_as, recommendation = x.recommendation, rationale = x.rationale, conditions = x.conditions,
            exceptions = x.exceptions, pitfalls = x.pitfalls, verification_checks = x.verification_checks, examples = x.examples,
            confidence = x.confidence, content_hash = x.content_hash, updated_at = coalesce(x.updated_at, now()),
            declared_updated_at = x.updated_at, reviewed_at = x.reviewed_at, license = x.license, supersedes = x.supersedes,
            file = x.file, content_version = r.content_version + 1,
            approved_at = CASE WHEN x.status = 'approved' THEN now() ELSE r.approved_at END,
            deprecated_at = CASE WHEN x.status = 'deprecated' THEN coalesce(r.deprecated_at, now()) END
       FROM ${RECORD_SET} WHERE r.id = x.id AND r.id = ANY (${uuidFieldSet(1, 'id')})`,
    [JSON.stringify(rewrites.map(recordRow))],
  );
  const ids = [JSON.stringify(rewrites.map((p) => p.id))];
  // The old text's passages no longer describe the record; it is re-embedded after commit.
  for (const table of ['record_passages', 'record_applies_to', 'record_sources']) {
    await tx.query(`DELETE FROM ${table} WHERE record_id = ANY (${uuidSet(1)})`, ids);
  }
}

/**
 * A re-review of unchanged text: the owner checked the record against its sources
 * again and imports it with a later `reviewed_at` and `--approve`. The text (and so
 * content_version and updated_at) stays; the review date and the stored file move on.
 */
async function refreshReviews(tx: Sql, plans: readonly Plan[]): Promise<void> {
  const reviewed = plans.filter((p) => p.record.reviewed_at !== undefined);
  if (reviewed.length === 0) return;
  await tx.query(
    `UPDATE records r SET reviewed_at = x.reviewed_at, file = x.file
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, reviewed_at date, file text)
      WHERE r.id = x.id AND r.id = ANY (${uuidFieldSet(1, 'id')}) AND (r.reviewed_at IS NULL OR r.reviewed_at < x.reviewed_at)`,
    [JSON.stringify(reviewed.map((p) => ({ id: p.id, reviewed_at: p.record.reviewed_at, file: JSON.stringify(p.record) })))],
  );
}

/** Keeps changed texts of approved records as their pending revision, replacing an older one. */
async function stageRevisions(tx: Sql, stages: readonly Plan[]): Promise<void> {
  if (stages.length === 0) return;
  await tx.query(
    `INSERT INTO record_revisions (record_id, content, content_hash)
     SELECT x.id, x.content, x.hash FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, content text, hash text)
     ON CONFLICT (record_id) DO UPDATE SET content = excluded.content, content_hash = excluded.content_hash, staged_at = now()`,
    [JSON.stringify(stages.map((p) => ({ id: p.id, content: JSON.stringify(p.record), hash: p.hash })))],
  );
}

/** A newly approved text replaces any revision that was waiting. */
async function dropRevisions(tx: Sql, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(`DELETE FROM record_revisions WHERE record_id = ANY (${uuidSet(1)})`, [JSON.stringify(ids)]);
}

/** Deprecates the approved records a newly approved one supersedes, naming it as their successor. */
async function retireSuperseded(tx: Sql, successors: readonly Plan[], masses: Set<number>): Promise<void> {
  if (successors.length === 0) return;
  const pairs = successors.flatMap((p) => p.record.supersedes.map((slug) => ({ slug, successor: p.id, reason: `superseded by ${p.record.slug}` })));
  const retired = await tx.query<{ id: string }>(
    `UPDATE records r SET status = 'deprecated', deprecated_at = now(), deprecation_reason = x.reason, superseded_by = x.successor
       FROM jsonb_to_recordset($1::jsonb) AS x(slug text, successor uuid, reason text)
      WHERE r.slug = x.slug AND r.slug = ANY (${textFieldSet(1, 'slug')}) AND r.status <> 'deprecated' AND r.id <> x.successor
      RETURNING r.id::text AS id`,
    [JSON.stringify(pairs)],
  );
  await reindexRecords(tx, retired.map((r) => r.id), masses);
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
      excerpt_hash: s.evidence_excerpt ? excerptHash(s.evidence_excerpt) : null,
      relation: s.relation,
    })),
  );
  if (sources.length > 0) {
    await tx.query(
      `INSERT INTO record_sources (record_id, position, title, url, publisher, evidence_excerpt, excerpt_hash, relation)
       SELECT * FROM jsonb_to_recordset($1::jsonb)
           AS x(record_id uuid, position int, title text, url text, publisher text, evidence_excerpt text, excerpt_hash text, relation text)`,
      [JSON.stringify(sources)],
    );
  }
}

/**
 * Keeps the approved text of each record's current content_version (once), with
 * who approved it, the gate report and the overrides (`slugs[i]` names `ids[i]`).
 */
export async function snapshot(tx: Sql, ids: readonly string[], approval?: Approval, slugs: readonly string[] = []): Promise<void> {
  if (ids.length === 0) return;
  const rows = ids.map((id, i) => ({
    id,
    approved_by: approval?.reviewer ?? null,
    gate_report: approval?.reports.get(slugs[i] ?? '') ?? null,
    overrides: approval?.overrides.get(slugs[i] ?? '') ?? [],
  }));
  await tx.query(
    `INSERT INTO record_history (record_id, content_version, snapshot, approved_by, gate_report, overrides)
     SELECT r.id, r.content_version, to_jsonb(r) - 'search_vector', x.approved_by, x.gate_report, x.overrides
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, approved_by text, gate_report jsonb, overrides jsonb)
       JOIN records r ON r.id = x.id
      WHERE r.id = ANY (${uuidFieldSet(1, 'id')})
     ON CONFLICT (record_id, content_version) DO NOTHING`,
    [JSON.stringify(rows)],
  );
}
