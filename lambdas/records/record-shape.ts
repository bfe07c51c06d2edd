/**
 * Shapes a stored record into the contract's result objects at a level of detail:
 * brief and standard for `search_knowledge`, full for `get_guidance`. Pure: it reads
 * nothing and decides nothing about relevance.
 */
import type { FullGuidanceResult, GuidanceResult } from '../../schema/tools.ts';
import type { StoredRecord } from './record-read.ts';

export type Detail = 'brief' | 'standard' | 'full';

const ONE_STEP_LOWER = { high: 'medium', medium: 'low', low: 'low' } as const;

/**
 * The record as answers show it when the owner has chosen to demote drifted
 * evidence (`CHATCTX_DRIFT_DEMOTES_CONFIDENCE`): while a source's newest check
 * since approval found its excerpt gone, its confidence is one step lower.
 */
export function withEvidenceStanding(record: StoredRecord, demoteDrifted: boolean): StoredRecord {
  return demoteDrifted && record.evidence_drifted ? { ...record, confidence: ONE_STEP_LOWER[record.confidence] } : record;
}

const optional = <T>(value: T | null): T | undefined => (value === null || value === '' ? undefined : value);

/** How many items of each list (conditions, exceptions, pitfalls, checks) a brief result keeps. */
export const BRIEF_LIST_ITEMS = 2;

/**
 * brief: every field the contract's result shape requires, with each list cut to
 * its first `BRIEF_LIST_ITEMS` items (the owner orders them most important first)
 * and sources without excerpts; standard: adds the reasoning, whole lists and
 * evidence; full (get_guidance): adds review metadata, version map, examples and
 * the phrasings the record is asked by (`asked_as`), which only serve retrieval.
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
    conditions: record.conditions.slice(0, BRIEF_LIST_ITEMS),
    exceptions: record.exceptions.slice(0, BRIEF_LIST_ITEMS),
    pitfalls: record.pitfalls.slice(0, BRIEF_LIST_ITEMS),
    verification_checks: record.verification_checks.slice(0, BRIEF_LIST_ITEMS),
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
    asked_as: record.asked_as.length > 0 ? record.asked_as : undefined,
  };
}
