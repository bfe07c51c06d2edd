/**
 * Shapes a stored record into the contract's result objects at a level of detail:
 * brief and standard for `search_knowledge`, full for `get_guidance`. Pure: it reads
 * nothing and decides nothing about relevance.
 */
import type { FullGuidanceResult, GuidanceResult } from '../../schema/tools.ts';
import type { StoredRecord } from './record-read.ts';

export type Detail = 'brief' | 'standard' | 'full';

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
