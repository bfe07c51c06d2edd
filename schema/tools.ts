/**
 * The three tools' argument and result schemas, defined once.
 *
 * Everything else derives from this file: the MCP `inputSchema`/`outputSchema` sent
 * in `tools/list`, `api.json`, the served docs' limits and the validation inside
 * each tool. A limit written twice will drift, so limits live in `LIMITS` only.
 */
import { z } from 'zod';

/** Every hard limit of the public contract. */
export const LIMITS = {
  queryMinChars: 2,
  queryMaxChars: 2000,
  technologiesMaxItems: 10,
  technologyMaxChars: 80,
  versionsMaxKeys: 20,
  /** Not in the contract; keeps a version map bounded. Same bound as a technology name. */
  versionValueMaxChars: 80,
  topicsMaxItems: 3,
  maxResultsMin: 1,
  maxResultsMax: 10,
  maxResultsDefault: 5,
  tokenBudgetMin: 200,
  tokenBudgetMax: 5000,
  tokenBudgetDefault: 2500,
  guidanceIdsMin: 1,
  guidanceIdsMax: 10,
  identifierMaxChars: 120,
  feedbackCommentMaxChars: 1000,
  /** Request body cap for POST /mcp (bytes). The largest valid call is far below it. */
  requestBodyMaxBytes: 65_536,
} as const;

export const TOPICS = [
  'architecture', 'implementation', 'security', 'accessibility', 'ux', 'reliability',
  'testing', 'performance', 'data', 'observability', 'tooling',
] as const;
export type Topic = (typeof TOPICS)[number];

export const TASK_TYPES = [
  'build', 'architecture', 'debug', 'security', 'accessibility',
  'performance', 'testing', 'review', 'other',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const FEEDBACK_CATEGORIES = ['helpful', 'not_helpful', 'incorrect', 'outdated', 'missing', 'other'] as const;
export const FEEDBACK_SOURCES = ['search_knowledge', 'get_guidance', 'other'] as const;
export const CONFIDENCE_LEVELS = ['high', 'medium', 'low'] as const;
export const RETRIEVAL_MODES = ['hybrid', 'keyword_fallback', 'no_match'] as const;

/** NUL, or half of a UTF-16 surrogate pair: nothing a person types, and Postgres refuses to store either. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True for text that can be stored and compared as it is. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** A string argument of `min`–`max` characters that is storable text. */
const text = (min: number, max: number) =>
  z.string().min(min).max(max).refine(isStorableText, { message: 'Must not contain NUL characters or unpaired surrogates' });

const identifier = text(1, LIMITS.identifierMaxChars);

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

export const searchKnowledgeInput = z.strictObject({
  query: text(LIMITS.queryMinChars, LIMITS.queryMaxChars)
    .refine((q) => q.trim().length >= LIMITS.queryMinChars, {
      message: `Query must contain at least ${LIMITS.queryMinChars} non-space characters`,
    })
    .describe('The implementation decision you are making, in plain words (symptoms, goal, constraints).'),
  technologies: z
    .array(text(1, LIMITS.technologyMaxChars))
    .max(LIMITS.technologiesMaxItems)
    .default([])
    .describe('Languages, frameworks, tools or platforms involved, e.g. ["React", "TypeScript"].'),
  versions: z
    .record(text(1, LIMITS.technologyMaxChars), text(1, LIMITS.versionValueMaxChars))
    .refine((v) => Object.keys(v).length <= LIMITS.versionsMaxKeys, {
      message: `At most ${LIMITS.versionsMaxKeys} versions`,
    })
    .default({})
    .describe('Versions in use keyed by technology, e.g. {"React": "18.3.1"}.'),
  topic: z
    .union([z.enum(TOPICS), z.array(z.enum(TOPICS)).min(1).max(LIMITS.topicsMaxItems)])
    .optional()
    .describe('One topic or up to three.'),
  task_type: z.enum(TASK_TYPES).optional().describe('What kind of work the decision is part of.'),
  max_results: z.number().int().min(LIMITS.maxResultsMin).max(LIMITS.maxResultsMax).default(LIMITS.maxResultsDefault),
  detail: z.enum(['brief', 'standard']).default('brief').describe('brief: the essentials; standard: adds rationale, conditions, exceptions, pitfalls, checks and evidence.'),
  token_budget: z.number().int().min(LIMITS.tokenBudgetMin).max(LIMITS.tokenBudgetMax).default(LIMITS.tokenBudgetDefault),
});
export type SearchKnowledgeInput = z.output<typeof searchKnowledgeInput>;

export const getGuidanceInput = z.strictObject({
  ids: z
    .array(identifier)
    .min(LIMITS.guidanceIdsMin)
    .max(LIMITS.guidanceIdsMax)
    .describe('Slugs or ids returned by search_knowledge.'),
  detail: z.enum(['brief', 'full']).default('full'),
});
export type GetGuidanceInput = z.output<typeof getGuidanceInput>;

export const submitFeedbackInput = z.strictObject({
  category: z.enum(FEEDBACK_CATEGORIES),
  record: identifier.optional().describe('The approved slug or id the feedback is about.'),
  source: z.enum(FEEDBACK_SOURCES).default('other'),
  comment: text(1, LIMITS.feedbackCommentMaxChars)
    .optional()
    .describe('Never include source code, secrets, credentials, customer data or personal information.'),
});
export type SubmitFeedbackInput = z.output<typeof submitFeedbackInput>;

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

export const appliesToSchema = z.object({
  kind: z.string(),
  name: z.string(),
  version_constraint: z.string().optional(),
});

export const sourceSchema = z.object({
  title: z.string(),
  url: z.string(),
  publisher: z.string().optional(),
  evidence_excerpt: z.string().optional(),
  relation: z.string(),
});

/** A record as search and get_guidance return it; the contract's shape: only `summary` and `rationale` are optional. */
export const guidanceResultSchema = z.object({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  topic: z.string(),
  summary: z.string().optional(),
  recommendation: z.string(),
  rationale: z.string().optional(),
  applies_to: z.array(appliesToSchema),
  conditions: z.array(z.string()),
  exceptions: z.array(z.string()),
  pitfalls: z.array(z.string()),
  verification_checks: z.array(z.string()),
  confidence: z.enum(CONFIDENCE_LEVELS),
  updated_at: z.string(),
  sources: z.array(sourceSchema),
  /** Why the record ranked where it did, e.g. a requested version outside its constraint. */
  applicability_note: z.string().optional(),
});
export type GuidanceResult = z.infer<typeof guidanceResultSchema>;

export const fullGuidanceResultSchema = guidanceResultSchema.extend({
  status: z.string().optional(),
  content_version: z.number().int().optional(),
  approved_at: z.string().optional(),
  version_constraints: z.record(z.string(), z.string()).optional(),
  examples: z.string().optional(),
  /** How agents ask for this record (symptoms, error texts, decisions, acronyms): what retrieval matches, not guidance. */
  asked_as: z.array(z.string()).optional(),
});
export type FullGuidanceResult = z.infer<typeof fullGuidanceResultSchema>;

export const searchKnowledgeOutput = z.object({
  query_summary: z.string(),
  results: z.array(guidanceResultSchema),
  retrieval: z.object({
    mode: z.enum(RETRIEVAL_MODES),
    degraded: z.boolean(),
    degraded_reason: z.string().optional(),
    embedding_provider: z.string().optional(),
    embedding_cache: z.enum(['hit', 'miss']).optional(),
    total_candidates: z.number().int(),
    technology_filter_fallback: z.boolean(),
    truncated: z.boolean(),
  }),
  suggestions: z.array(z.string()),
});
export type SearchKnowledgeOutput = z.infer<typeof searchKnowledgeOutput>;

export const getGuidanceOutput = z.object({
  results: z.array(fullGuidanceResultSchema),
  missing: z.array(z.string()),
  /** Present only when some identifiers in `missing` were withdrawn in favour of another record: identifier → successor slug. */
  superseded_by: z
    .record(z.string(), z.string())
    .optional()
    .describe('For identifiers in `missing` whose record was replaced: the slug of the approved record that replaces it. Ask get_guidance for that one.'),
});
export type GetGuidanceOutput = z.infer<typeof getGuidanceOutput>;

export const submitFeedbackOutput = z.object({
  accepted: z.boolean(),
  id: z.string(),
  message: z.string(),
});
export type SubmitFeedbackOutput = z.infer<typeof submitFeedbackOutput>;

// ---------------------------------------------------------------------------
// Tool catalogue
// ---------------------------------------------------------------------------

export interface ToolDefinition {
  readonly name: 'search_knowledge' | 'get_guidance' | 'submit_feedback';
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output: z.ZodType;
  readonly annotations: { readOnlyHint: boolean; destructiveHint: boolean; openWorldHint: boolean; idempotentHint?: boolean };
}

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'search_knowledge',
    title: 'Search engineering guidance',
    description:
      'Find owner-reviewed engineering guidance for an implementation decision. Describe the decision in plain words; ' +
      'optionally name technologies, versions, topic and task type. Returns a few records (recommendation, where it applies, ' +
      'sources) or mode "no_match" when nothing in the knowledge base fits; never invent guidance it did not return. ' +
      'Read applies_to, conditions and exceptions before acting; call get_guidance for the full record.',
    input: searchKnowledgeInput,
    output: searchKnowledgeOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  {
    name: 'get_guidance',
    title: 'Get full guidance records',
    description:
      'Fetch full records by the slugs or ids that search_knowledge returned: exceptions, pitfalls, verification checks, ' +
      'version constraints and examples. Unknown, deprecated or unapproved identifiers are listed in "missing"; a replaced ' +
      'record\'s successor is named in "superseded_by".',
    input: getGuidanceInput,
    output: getGuidanceOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  {
    name: 'submit_feedback',
    title: 'Send anonymous feedback',
    description:
      'Tell the owners a result was helpful, not helpful, incorrect, outdated or missing. Anonymous and owner-reviewed; ' +
      'it never changes ranking automatically. Never include code, secrets, credentials or personal data in the comment.',
    input: submitFeedbackInput,
    output: submitFeedbackOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  },
];

/** JSON Schema for a tool's arguments as clients see it (defaults shown, not required). */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  // `versions` is bounded by a refinement, which JSON Schema cannot express by itself.
  const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (props?.versions) props.versions.maxProperties = LIMITS.versionsMaxKeys;
  return schema;
}

/**
 * The error codes a tool result can carry, and the only ones published (tool
 * output schemas, `api.json`, the docs). A tool fails on its arguments
 * (`validation_error`), on the database still waking from a pause when the call
 * had to answer (`unavailable`: nothing was done, repeat the same call after
 * `details.retry_after_seconds`), or on something else outside the caller's
 * control (`internal`); unknown identifiers are answered (`missing`, `no_match`),
 * not failed, and authentication and quota are refused by HTTP status before any
 * tool runs.
 */
export const TOOL_ERROR_CODES = ['validation_error', 'unavailable', 'internal'] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

/** The structured content of every failed call (`isError: true`). */
export const toolErrorOutput = z.object({
  error: z.object({
    code: z.enum(TOOL_ERROR_CODES),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
});

/**
 * JSON Schema for a tool's structured result: the success shape or the error shape.
 * Clients validate structured content against it even on `isError` results, so the
 * error branch must be part of the schema.
 */
export function outputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(z.union([tool.output, toolErrorOutput]), { io: 'output' }) as Record<string, unknown>;
  delete schema.$schema;
  return { type: 'object', ...schema };
}
