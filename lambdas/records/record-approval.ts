/**
 * Approval with the quality gates in front: an import with `--approve`, `records
 * approve` (a candidate, a deprecated record, or an approved record's pending
 * revision) and the starter corpus all go through `publish`, which runs the
 * gates (`quality-gates.ts`) on exactly the text that would go public, refuses
 * when a gate fails and the owner has not overridden it with a reason, and stores
 * who approved, the gate report and the overrides with the approved version.
 */
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import { findByIdentifiers } from './record-review.ts';
import { importRecords, contentHash, type Approval, type ImportSummary } from './record-import.ts';
import { recordFileSchema, type RecordFile } from './record-schema.ts';
import { GATE_CODES, runGates, type GateCode, type GateReport, type ReviewRules } from './quality-gates.ts';
import { effectivePolicy } from './source-policy.ts';
import { similarApprovedRecords } from './similar-records.ts';
import { phrasingClashes } from './phrasings.ts';
import { textSet } from './record-identifiers.ts';
import { latestChecks } from './source-verification.ts';

export interface Override {
  readonly gate: GateCode;
  /** Why the owner publishes despite the gate, stored with the approval. */
  readonly reason: string;
}

export interface ReviewOptions {
  readonly rules: ReviewRules;
  readonly reviewer: string;
  readonly overrides: readonly Override[];
  readonly now?: Date;
  /** The collection new records of an import go into, by name (`importRecords`' option). @default public */
  readonly collection?: string;
}

/** The gate report of each record against the approved corpus and the store's policy. */
export async function gateReports(sql: Sql, records: readonly RecordFile[], rules: ReviewRules, now = new Date()): Promise<GateReport[]> {
  if (records.length === 0) return [];
  const [policy, neighbours, clashes, checks] = await Promise.all([
    effectivePolicy(sql),
    similarApprovedRecords(sql, records),
    phrasingClashes(sql, records),
    latestChecks(sql, records.flatMap((r) => r.sources)),
  ]);
  return records.map((record, i) => runGates({ record, rules, policy, neighbours: neighbours[i]!, clashes: clashes[i]!, checks, now }));
}

/**
 * The approval to store, or a `ValidationError` listing every failed gate no
 * override covers. An override that covers nothing is refused too: it would
 * record a reason for a decision that was never needed.
 */
export function approvalFor(reports: readonly GateReport[], options: Pick<ReviewOptions, 'reviewer' | 'overrides'>): Approval {
  const problems: { where: string; problem: string }[] = [];
  const used = new Set<GateCode>();
  const overrides = new Map<string, Override[]>();
  for (const report of reports) {
    for (const gate of report.gates) {
      if (gate.verdict === 'pass') continue;
      const override = options.overrides.find((o) => o.gate === gate.code);
      if (override) {
        used.add(gate.code);
        overrides.set(report.slug, [...(overrides.get(report.slug) ?? []), override]);
      } else if (gate.verdict === 'fail') {
        problems.push({ where: report.slug, problem: `${gate.code}: ${gate.message}` });
      }
    }
  }
  for (const o of options.overrides) {
    if (!used.has(o.gate)) problems.push({ where: `--override ${o.gate}`, problem: `no record's ${o.gate} gate failed or warned, so there is nothing to override` });
  }
  if (problems.length > 0) {
    throw new ValidationError(
      `${problems.length} quality gate problem(s); nothing was approved. Fix the records, or override a gate with a reason ` +
        `(--override GATE="why it may be published anyway").`,
      { problems },
    );
  }
  return { reviewer: options.reviewer, reports: new Map(reports.map((r) => [r.slug, r])), overrides };
}

/** The records of an import that approving would publish: new, changed, or not approved now; deprecations aside. */
async function toPublish(sql: Sql, records: readonly RecordFile[]): Promise<RecordFile[]> {
  const rows = await sql.query<{ slug: string; status: string; content_hash: string }>(
    `SELECT slug, status, content_hash FROM records WHERE slug = ANY (${textSet(1)})`,
    [JSON.stringify(records.map((r) => r.slug))],
  );
  const existing = new Map(rows.map((row) => [row.slug, row]));
  return records.filter((record) => {
    if (record.status === 'deprecated') return false;
    const found = existing.get(record.slug);
    return !found || found.status !== 'approved' || found.content_hash !== contentHash(record);
  });
}

export interface ReviewedImport {
  readonly summary: ImportSummary;
  /** The gate report of every record the import publishes (with `approve`) or would (without). */
  readonly gates: readonly GateReport[];
}

/** Imports records; with `approve` the gates must hold (or be overridden) first. */
export async function importReviewed(sql: Sql, records: readonly RecordFile[], approve: boolean, options: ReviewOptions): Promise<ReviewedImport> {
  const gates = await gateReports(sql, await toPublish(sql, records), options.rules, options.now);
  const approval = approve ? approvalFor(gates, options) : undefined;
  const summary = await importRecords(sql, records, { approve, approval, collection: options.collection });
  return { summary, gates };
}

interface Reviewable {
  id: string;
  slug: string;
  status: string;
  file: string | null;
  revision: string | null;
}

/** Records by slug or id with the text approving them would publish: a pending revision, else their own. */
export async function reviewableRecords(sql: Sql, identifiers: readonly string[]): Promise<{ row: Reviewable; record: RecordFile | null }[]> {
  const rows = await findByIdentifiers<Reviewable>(
    sql,
    identifiers,
    'r.id::text AS id, r.slug, r.status, r.file, v.content AS revision',
    'records r LEFT JOIN record_revisions v ON v.record_id = r.id',
  );
  return rows.map((row) => {
    const text = row.revision ?? row.file;
    return { row, record: text === null ? null : recordFileSchema.parse({ ...JSON.parse(text), status: undefined, id: row.id }) };
  });
}

/**
 * Approves records already in the store: candidates and deprecated records with
 * their own text, approved records with their pending revision (which then
 * replaces the served text with a new content_version). Already-approved records
 * without a revision are left alone.
 */
export async function approveStored(sql: Sql, identifiers: readonly string[], options: ReviewOptions): Promise<ReviewedImport & { ids: string[] }> {
  const found = await reviewableRecords(sql, identifiers);
  const legacy = found.filter((f) => f.record === null).map((f) => f.row.slug);
  if (legacy.length > 0) {
    throw new ValidationError(`These records were stored before review kept their file; re-import their files to review them: ${legacy.join(', ')}.`, {
      slugs: legacy,
    });
  }
  const pending = found.filter((f) => f.row.status !== 'approved' || f.row.revision !== null).map((f) => f.record!);
  const result = await importReviewed(sql, pending, true, options);
  return { ...result, ids: result.summary.changed_ids };
}

/** Every gate code, for argument checks and help texts. */
export const OVERRIDABLE_GATES: readonly GateCode[] = GATE_CODES;
