/**
 * The file format of a guidance record, as owners write it in `guidance/` and as
 * `chatctx records import` reads it. It mirrors the contract's full record; what the
 * store derives (status history, content_version, timestamps) is optional here.
 */
import { z } from 'zod';
import { CONFIDENCE_LEVELS, TASK_TYPES, TOPICS, isStorableText } from '../../schema/tools.ts';

const text = (max: number) =>
  z.string().trim().min(1).max(max).refine(isStorableText, { message: 'must not contain NUL characters or unpaired surrogates' });
const list = (max: number) => z.array(text(1000)).max(max).default([]);

/** A record's life: imported as a candidate, published once approved, withdrawn when deprecated. */
export const RECORD_STATUSES = ['candidate', 'approved', 'deprecated'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

/** Phrasings per record the `asked_as` gate accepts, and the characters of one. */
export const ASKED_AS_MIN = 3;
export const ASKED_AS_MAX = 10;
export const ASKED_AS_MIN_CHARS = 3;
export const ASKED_AS_MAX_CHARS = 200;

export const APPLIES_TO_KINDS = [
  'language', 'framework', 'library', 'runtime', 'database',
  'platform', 'protocol', 'standard', 'tool',
] as const;

/**
 * Where an owner read the quoted text when verifying it: the docs' own public
 * repository (a file at a commit), or the published page itself.
 */
const verifiedFrom = z.union([
  z.strictObject({
    repository: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'repository is owner/name'),
    commit: z.string().regex(/^[0-9a-f]{40}$/, 'commit is 40 hex digits').optional(),
    path: text(300),
  }),
  z.strictObject({ page: z.url({ protocol: /^https$/ }) }),
]);

export const recordFileSchema = z.strictObject({
  id: z.uuid().optional(),
  slug: z
    .string()
    .min(3)
    .max(120)
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'slug must be kebab-case (a-z, 0-9, single dashes)'),
  title: text(200),
  topic: z.enum(TOPICS),
  task_types: z.array(z.enum(TASK_TYPES)).max(TASK_TYPES.length).default([]),
  summary: text(1000).optional(),
  recommendation: text(2000),
  rationale: text(2000).optional(),
  applies_to: z
    .array(
      z.strictObject({
        kind: z.enum(APPLIES_TO_KINDS),
        name: text(80),
        version_constraint: text(80).optional(),
      }),
    )
    .max(20)
    .default([]),
  /**
   * How agents ask for this record: symptoms as they see them (exact error messages
   * included), decision phrasings, and the acronyms and synonyms its subject goes by.
   * Searched as its own field and embedded as its own passages; shown by get_guidance
   * at detail "full" only. The quality gates hold it to ASKED_AS_MIN–ASKED_AS_MAX
   * items; the schema only bounds it. Absent rather than empty by default, so a record
   * written before the field existed keeps its content hash.
   */
  asked_as: z.array(text(ASKED_AS_MAX_CHARS * 2)).max(ASKED_AS_MAX * 2).optional(),
  conditions: list(20),
  exceptions: list(20),
  pitfalls: list(20),
  verification_checks: list(20),
  confidence: z.enum(CONFIDENCE_LEVELS),
  examples: z.string().max(4000).refine(isStorableText, { message: 'must not contain NUL characters or unpaired surrogates' }).optional(),
  status: z.enum(RECORD_STATUSES).optional(),
  updated_at: z.iso.datetime({ offset: true }).optional(),
  /** The day an owner last checked the guidance against its sources (the freshness gate reads it). */
  reviewed_at: z.iso.date().optional(),
  /** The licence of the record's own text, an SPDX identifier; absent means the store's default. */
  license: z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9.+-]+$/, 'license must be an SPDX identifier such as CC-BY-4.0').optional(),
  /**
   * The collection a new record goes into (`collections.ts`); absent, the import's
   * (`--collection`, else public). Not part of the content: moving a stored record is
   * `records move`, a reviewed change.
   */
  collection: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'collection must be a collection name (lower-case letters, digits, dashes)').optional(),
  /** Slugs of approved records this one replaces: approving it deprecates them and names it their successor. */
  supersedes: z.array(z.string().min(3).max(120)).max(10).default([]),
  sources: z
    .array(
      z.strictObject({
        title: text(300),
        url: z.url({ protocol: /^https$/ }),
        publisher: text(200).optional(),
        evidence_excerpt: text(1000).optional(),
        relation: z.enum(['supports', 'contradicts', 'context', 'supersedes']).default('supports'),
        /** The day the excerpt was last found word for word in the source's text, and where that text was read. */
        verified_at: z.iso.date().optional(),
        verified_from: verifiedFrom.optional(),
      }).refine((s) => (s.verified_at === undefined) === (s.verified_from === undefined), {
        message: 'verified_at and verified_from go together: the day the excerpt was found, and where',
      }),
    )
    .min(1, 'every record needs at least one source')
    .max(10),
});

export type RecordFile = z.output<typeof recordFileSchema>;
