/**
 * What the no-leak tests of both runtimes share: an `internal` collection of
 * guidance written for them, whose words overlap the starter corpus's (retry,
 * backoff, S3, PostgreSQL, PII) so that, were it visible to a caller who may not
 * see it, it would move BM25 statistics, ranking, `total_candidates` and no_match
 * suggestions; the questions both runtimes ask; and how two answers are compared.
 *
 * It does not start a store or a server: each test file builds store A (starter
 * corpus + this collection) and store B (starter corpus alone) its own way.
 */
import type { Sql } from '../../lambdas/ports/sql.ts';
import type { Secrets } from '../../lambdas/ports/secrets.ts';
import { recordFileSchema, type RecordFile } from '../../lambdas/records/record-schema.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import { deprecateRecords } from '../../lambdas/records/record-review.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { PUBLIC_COLLECTION_ID } from '../../lambdas/auth/caller-scope.ts';
import { reviewedRecord } from './records.ts';

export const INTERNAL_COLLECTION = 'internal';

/** The internal records' slugs, by what the tests do with them. */
export const INTERNAL = {
  retry: 'use-the-shared-retry-client-for-service-calls',
  pii: 'write-pii-only-to-the-eu-postgresql-cluster',
  buckets: 'name-s3-buckets-by-team-environment-and-purpose',
  migrations: 'run-postgresql-migrations-through-the-release-pipeline',
  /** Deprecated, superseded by `retry`: its successor must not show to a caller who cannot see either. */
  oldRetry: 'wrap-service-calls-in-the-legacy-retry-helper',
} as const;

const POSTGRES = [{ kind: 'database', name: 'PostgreSQL', version_constraint: '>=14' }];

/** Internal guidance, in a form every quality gate passes; the wording is the point, overlapping public records on purpose. */
export function internalRecords(): RecordFile[] {
  const records = [
    reviewedRecord(INTERNAL.retry, {
      title: 'Use the shared retry client for calls between our services',
      summary: 'Hand-rolled retry loops with their own backoff and jitter hammer a struggling service during an incident.',
      asked_as: [
        'which retry client do our services use for outbound calls',
        'retry with exponential backoff between internal services',
        'how many retries and what backoff for a call to another team service',
      ],
      recommendation: 'Make every call to another service through the shared retry client: it applies capped exponential backoff with jitter, honours Retry-After and stops retrying when the circuit opens.',
    }),
    reviewedRecord(INTERNAL.pii, {
      title: 'Write PII only to the EU PostgreSQL cluster',
      topic: 'security',
      summary: 'Personal data of customers written to the US PostgreSQL cluster breaks our data residency commitments.',
      asked_as: [
        'where may we store personal data of customers',
        'which PostgreSQL cluster holds PII',
        'can customer email addresses go to the US database',
      ],
      recommendation: 'Store personally identifiable information (PII) only in the EU PostgreSQL cluster; other clusters hold pseudonymous ids and never names, emails or addresses.',
      applies_to: POSTGRES,
    }),
    reviewedRecord(INTERNAL.buckets, {
      title: 'Name S3 buckets team-environment-purpose',
      topic: 'architecture',
      summary: 'S3 buckets named after a person or a project cannot be traced to an owner when their bill or their data needs one.',
      asked_as: ['how should we name S3 buckets', 'S3 bucket naming convention for a new team bucket', 'which prefix does an S3 bucket name start with'],
      recommendation: 'Name every S3 bucket <team>-<environment>-<purpose>, for example payments-prod-invoices, and tag it with the owning team.',
      applies_to: [{ kind: 'platform', name: 'AWS' }],
    }),
    reviewedRecord(INTERNAL.migrations, {
      title: 'Run PostgreSQL migrations only through the release pipeline',
      topic: 'data',
      summary: 'A migration run by hand from a laptop against the production PostgreSQL database is never reviewed and never recorded.',
      asked_as: ['how do we run a PostgreSQL migration in production', 'may I apply a schema change by hand', 'who applies database migrations on release'],
      recommendation: 'Apply PostgreSQL schema migrations only through the release pipeline, which takes the lock timeout from the platform defaults and records every change.',
      applies_to: POSTGRES,
    }),
    reviewedRecord(INTERNAL.oldRetry, {
      title: 'Wrap service calls in the legacy retry helper',
      summary: 'Calls to other services fail on the first network error without a retry helper around them.',
      asked_as: ['legacy retry helper for service calls', 'wrap a call in the old retry helper', 'retry helper from the platform library'],
      recommendation: 'Wrap each call to another service in the legacy retry helper from the platform library, with three attempts and a fixed one second delay.',
    }),
  ];
  return records.map((record) => recordFileSchema.parse(record));
}

/**
 * Makes store A of a store holding the starter corpus: the `internal` collection with the
 * internal records, approved, and the legacy helper deprecated in favour of the shared
 * client. Returns the collection's id. Embedding is left to the runtime (its server or the
 * test), as it is for any import.
 */
export async function addInternalCollection(sql: Sql): Promise<number> {
  const collection = await createCollection(sql, INTERNAL_COLLECTION, 'Guidance for our own services only.');
  await importRecords(sql, internalRecords(), { approve: true, collection: INTERNAL_COLLECTION });
  await deprecateRecords(sql, [INTERNAL.oldRetry], { supersededBy: INTERNAL.retry });
  return collection.id;
}

/** What the internal copies of public records end their slugs with. */
export const TWIN_SUFFIX = '-internal-copy';

/**
 * An internal copy of each of `records` (the same text under another slug): passages that sit
 * right beside every public one, so a nearest-neighbour search that walked through them
 * while skipping them (an approximate index shared by all collections) would find other
 * public passages than in a store without them.
 */
export async function addInternalTwins(sql: Sql, records: readonly RecordFile[]): Promise<void> {
  const twins = records.map((record) => ({ ...record, slug: `${record.slug}${TWIN_SUFFIX}` }));
  await importRecords(sql, twins, { approve: true, collection: INTERNAL_COLLECTION });
}

export interface ScopedKeys {
  /** A key that sees public only (the default scope). */
  readonly publicOnly: { key: string; id: string };
  /** A key that sees public and internal. */
  readonly internal: { key: string; id: string };
}

export async function scopedKeys(sql: Sql, secrets: Secrets, internalId: number): Promise<ScopedKeys> {
  const keys = new KeyRepository(sql, secrets);
  const publicOnly = await keys.create('public only', null);
  const internal = await keys.create('public and internal', null, { collections: [PUBLIC_COLLECTION_ID, internalId], feedback: true });
  return { publicOnly: { key: publicOnly.key, id: publicOnly.id }, internal: { key: internal.key, id: internal.id } };
}

export interface Question {
  readonly name: string;
  readonly args: Record<string, unknown>;
  /** The internal record a caller who sees `internal` gets for it. */
  readonly internal?: string;
}

/** Questions about internal topics, public ones, ones both answer, and one no guest can be answered. */
export const QUESTIONS: readonly Question[] = [
  { name: 'internal: retry client', args: { query: 'which retry client should our services use for calls to another service' }, internal: INTERNAL.retry },
  { name: 'internal: where PII goes', args: { query: 'where may we store PII of customers, which PostgreSQL cluster' }, internal: INTERNAL.pii },
  { name: 'internal only: S3 bucket names (no_match for guests)', args: { query: 'S3 bucket naming convention for a new team bucket' }, internal: INTERNAL.buckets },
  { name: 'internal: migrations by hand', args: { query: 'may I run a PostgreSQL schema migration by hand in production' }, internal: INTERNAL.migrations },
  { name: 'public: password hashing', args: { query: 'password hashing algorithm for user accounts' } },
  { name: 'public: React list keys', args: { query: 'what should I use as the key prop when mapping over an array' } },
  { name: 'both: retry backoff', args: { query: 'retry with exponential backoff and jitter after a 503' } },
  { name: 'both: PostgreSQL timeouts', args: { query: 'statement timeout and lock timeout for PostgreSQL application roles', technologies: ['PostgreSQL'] } },
  { name: 'both: PII in logs', args: { query: 'keep PII and secrets out of structured logs', detail: 'brief' } },
  { name: 'both: retries on Node.js', args: { query: 'retry failed calls to another service from Node.js', technologies: ['Node.js'], detail: 'standard' } },
];

/** The slugs of an answer's results, in order. */
export const slugsOf = (answer: any): string[] => (answer?.results ?? []).map((r: { slug: string }) => r.slug);

/** Every internal slug (and internal copy) an answer, or any value, mentions anywhere. */
export function internalMentions(value: unknown): string[] {
  const text = JSON.stringify(value);
  return [...Object.values(INTERNAL).filter((slug) => text.includes(slug)), ...(text.includes(TWIN_SUFFIX) ? [TWIN_SUFFIX] : [])];
}

/**
 * An answer as two stores must agree on it: everything, with each result's `id` read as its
 * slug and without its `updated_at` (both are made when a store imports a record, so the same
 * starter record has another id and time in each store; the slug is the record), and without
 * `retrieval.embedding_cache`, which says whether this store had embedded the same question
 * before (a first ask is `miss`, any later one `hit`, whoever asked) and so differs by call
 * order, not by what the caller may see.
 */
export function comparable(answer: any): unknown {
  const { embedding_cache: _ignored, ...retrieval } = answer.retrieval ?? {};
  const results = (answer.results ?? []).map(({ updated_at: _imported, ...r }: { id: string; slug: string; updated_at?: string }) => ({ ...r, id: `id of ${r.slug}` }));
  return { ...answer, results, retrieval };
}

/** A get_guidance answer with an internal record's id put back to the placeholder, for comparing with an unknown id's answer. */
export function withIdAs(value: unknown, id: string, placeholder: string): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll(id, placeholder));
}

/**
 * Makes a store read the exact nearest passages up to `passages` visible ones
 * (`chatctx.exact_passages`, schema/013_vector_index_at_every_size.sql): for this
 * session, and, through `postgresql.auto.conf` (PGlite reads it at every open), for
 * the server that opens the store next. Store B of the no-leak tests holds one
 * collection, so it would walk the HNSW index, and two HNSW graphs can differ by a
 * near tie; a guest on store A reads exactly (it cannot see every collection), so B
 * must too for "the same answer" to be a test of leaks alone.
 */
export async function answerExactlyUpTo(sql: Sql, passages: number): Promise<void> {
  await sql.query(`ALTER SYSTEM SET chatctx.exact_passages = '${passages}'`);
  await sql.query("SELECT set_config('chatctx.exact_passages', $1, false)", [String(passages)]);
}
