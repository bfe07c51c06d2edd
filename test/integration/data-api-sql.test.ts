/**
 * `DataApiSql` with the real AWS SDK client against a Data-API-compatible
 * endpoint backed by PGlite (test/support/data-api-fixture.ts): migrations,
 * parameter and result encoding as the service binds and returns them,
 * transactions, the resuming-cluster and transient-error retries over the wire,
 * error hygiene, and the core's own import + search + get_guidance path over it,
 * which proves the SQL the core sends and the Data API record encoding on real
 * Postgres. The encoding and retry rules on their own, without the service, are
 * test/unit/data-api-encoding.test.ts and test/unit/data-api-retry.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { DataApiError } from '../../lambdas/storage/data-api-encoding.ts';
import { UnavailableError } from '../../lambdas/errors/app-error.ts';
import { FakeClock, pauseCluster } from '../support/paused-cluster.ts';
import { DatabaseError } from '../../lambdas/storage/database-error.ts';
import { loadMigrations, migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { createLogger, silentLogger } from '../../lambdas/observability/logger.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { startDataApiFixture, type DataApiFixture } from '../support/data-api-fixture.ts';

const ARNS = {
  resourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx',
  secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:chatctx-db',
  database: 'chatctx',
};

let fixture: DataApiFixture;
let client: RDSDataClient;
let sql: DataApiSql;

const open = (options: { timeBudgetMs?: number } = {}) => new DataApiSql({ client, ...ARNS, ...options });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  fixture = await startDataApiFixture();
  client = new RDSDataClient({
    endpoint: fixture.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  sql = open();
});

afterAll(async () => {
  client?.destroy();
  await fixture?.close();
});

describe('migrations', () => {
  it('applies every schema file through the Data API, and nothing on a second run', async () => {
    const all = (await loadMigrations()).map((m) => m.version);
    expect(all.length).toBeGreaterThan(0);
    expect(await migrate(sql)).toEqual(all);
    expect(await migrate(sql)).toEqual([]);
    const [row] = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'");
    expect(row?.n).toBe(1);
  });
});

describe('parameter encoding', () => {
  it('round-trips strings, integers, floats, booleans, null, jsonb, vectors and uuids', async () => {
    const tricky = `it's "quoted", with $1 and :p1 and $$ inside`;
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const [row] = await sql.query<Record<string, unknown>>(
      `SELECT '$1 stays' AS literal, $$ $2 stays $$ AS dollar, -- $9 is a comment
              $1::text AS s, pg_typeof($1)::text AS s_type,
              $2::int AS i, pg_typeof($2)::text AS i_type,
              $3::float8 AS f, pg_typeof($3)::text AS f_type,
              $4::boolean AS b, $5::text AS n, $5::text IS NULL AS n_is_null,
              $6::jsonb AS j, $7::vector AS v, $8::uuid AS u, $8::uuid = gen_random_uuid() AS u_compared`,
      [tricky, 42, 2.5, true, null, JSON.stringify({ a: [1, 'two'], b: null }), '[1,2.5,-3]', uuid],
    );
    expect(row).toEqual({
      literal: '$1 stays',
      dollar: ' $2 stays ',
      s: tricky,
      s_type: 'character varying',
      i: 42,
      i_type: 'bigint',
      f: 2.5,
      f_type: 'double precision',
      b: true,
      n: null,
      n_is_null: true,
      // jsonb comes back as its JSON text unless the query names the column in `options.json`.
      j: '{"a": [1, "two"], "b": null}',
      v: '[1,2.5,-3]',
      u: uuid,
      u_compared: false,
    });
    expect(fixture.calls.at(-1)?.parameters).toEqual([
      { name: 'p1', value: { stringValue: tricky } },
      { name: 'p2', value: { longValue: 42 } },
      { name: 'p3', value: { doubleValue: 2.5 } },
      { name: 'p4', value: { booleanValue: true } },
      { name: 'p5', value: { isNull: true } },
      { name: 'p6', value: { stringValue: JSON.stringify({ a: [1, 'two'], b: null }) } },
      { name: 'p7', value: { stringValue: '[1,2.5,-3]' } },
      { name: 'p8', value: { stringValue: uuid } },
    ]);
  });

  it('sends only the parameters a statement uses, and refuses a placeholder without a value', async () => {
    expect(await sql.query('SELECT $2::text AS second', ['unused', 'used'])).toEqual([{ second: 'used' }]);
    expect(fixture.calls.at(-1)?.parameters).toEqual([{ name: 'p2', value: { stringValue: 'used' } }]);
    const error = await rejection(sql.query('SELECT $3::text', ['a']));
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).code).toBe('42P02');
  });

  it('binds strings as varchar, as the service does: a non-text column needs a cast in the SQL', async () => {
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const uncast = await rejection(sql.query('SELECT gen_random_uuid() = $1 AS same', [uuid]));
    expect((uncast as DatabaseError).code).toBe('42883');
    expect(await sql.query('SELECT gen_random_uuid() = $1::uuid AS same', [uuid])).toEqual([{ same: false }]);
  });

  it('decodes numbers, numeric, arrays, dates and timestamps', async () => {
    const [row] = await sql.query<Record<string, unknown>>(
      `SELECT 7::bigint AS l, 1.50::numeric AS d, 0.25::real AS r, '{a,"b c"}'::text[] AS arr, '{1,2}'::int[] AS ints,
              '2024-01-02'::date AS day, '2024-01-02 03:04:05.678901+00'::timestamptz AS t,
              '2024-01-02 03:04:05+00'::timestamptz AS whole, now() AS current, NULL::timestamptz AS none`,
    );
    expect(row).toMatchObject({ l: 7, d: '1.50', r: 0.25, arr: ['a', 'b c'], ints: [1, 2], day: '2024-01-02', none: null });
    // Data API timestamps are UTC without a zone; the adapter gives the port's form, ISO-8601 UTC with milliseconds.
    expect(row?.t).toBe('2024-01-02T03:04:05.678Z');
    expect(row?.whole).toBe('2024-01-02T03:04:05.000Z');
    expect(Math.abs(new Date(row?.current as string).getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('reads timestamps as the right instant whatever the process time zone', async () => {
    const previous = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      const [row] = await sql.query<{ t: string }>("SELECT '2024-07-01 12:00:00.5+00'::timestamptz AS t");
      expect(new Date(row!.t).toISOString()).toBe('2024-07-01T12:00:00.500Z');
    } finally {
      if (previous === undefined) delete process.env.TZ;
      else process.env.TZ = previous;
    }
  });
});

describe('transactions', () => {
  beforeAll(async () => {
    await sql.query('CREATE TABLE tx_items (id integer PRIMARY KEY, label text NOT NULL UNIQUE)');
  });

  const labels = async () => (await sql.query<{ label: string }>('SELECT label FROM tx_items ORDER BY id')).map((r) => r.label);

  it('commits all the work, and a nested transaction reuses the open one', async () => {
    const begun = fixture.operations.filter((o) => o === 'BeginTransaction').length;
    const result = await sql.transaction(async (tx) => {
      await tx.query('INSERT INTO tx_items (id, label) VALUES ($1, $2)', [1, 'one']);
      await tx.transaction((inner) => inner.query('INSERT INTO tx_items (id, label) VALUES ($1, $2)', [2, 'two']));
      // Statements issued together still run one after the other in the transaction.
      await Promise.all([3, 4].map((id) => tx.query('INSERT INTO tx_items (id, label) VALUES ($1, $2)', [id, `n${id}`])));
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM tx_items'))[0]?.n;
    });
    expect(result).toBe(4);
    expect(await labels()).toEqual(['one', 'two', 'n3', 'n4']);
    expect(fixture.operations.filter((o) => o === 'BeginTransaction').length).toBe(begun + 1);
    expect(fixture.operations.at(-2)).toBe('CommitTransaction');
  });

  it('rolls back entirely when the work throws, and rethrows its error', async () => {
    const boom = new Error('boom');
    const error = await rejection(
      sql.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_items (id, label) VALUES ($1, $2)', [10, 'ten']);
        throw boom;
      }),
    );
    expect(error).toBe(boom);
    expect(fixture.operations.at(-1)).toBe('RollbackTransaction');
    expect(await labels()).toEqual(['one', 'two', 'n3', 'n4']);
  });

  it('rolls back entirely when a statement fails', async () => {
    const error = await rejection(
      sql.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_items (id, label) VALUES ($1, $2)', [11, 'eleven']);
        await tx.query('INSERT INTO tx_items (id, label) VALUES ($1, $2)', [12, 'one']);
      }),
    );
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).code).toBe('23505');
    expect(await labels()).toEqual(['one', 'two', 'n3', 'n4']);
  });

  it('refuses statements on a transaction that has ended', async () => {
    let leaked: Parameters<Parameters<DataApiSql['transaction']>[0]>[0] | undefined;
    await sql.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.query('SELECT 1')).rejects.toThrow(/ended/);
  });
});

describe('resuming cluster', () => {
  const COMMUNICATIONS =
    'Communications link failure\n\nThe last packet sent successfully to the server was 0 milliseconds ago. The driver has not received any packets from the server.';

  it('retries a statement until the cluster answers', async () => {
    const before = fixture.calls.length;
    fixture.failNext(2, 'BadRequestException', COMMUNICATIONS);
    expect(await sql.query('SELECT $1::int + 1 AS n', [41])).toEqual([{ n: 42 }]);
    expect(fixture.calls.length - before).toBe(3);
  });

  it('retries on DatabaseResumingException, and retries BeginTransaction', async () => {
    fixture.failNext(1, 'DatabaseResumingException', 'The Aurora DB instance chatctx is resuming after being auto-paused.');
    expect(await sql.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    const begins = fixture.operations.filter((o) => o === 'BeginTransaction').length;
    fixture.failNext(1, 'DatabaseResumingException', 'resuming', ['BeginTransaction']);
    expect(await sql.transaction((tx) => tx.query('SELECT 2 AS two'))).toEqual([{ two: 2 }]);
    expect(fixture.operations.filter((o) => o === 'BeginTransaction').length).toBe(begins + 2);
  });

  it('does not retry a statement inside an open transaction', async () => {
    const before = fixture.calls.length;
    fixture.failNext(1, 'DatabaseResumingException', 'resuming');
    const error = await rejection(sql.transaction((tx) => tx.query('SELECT 1')));
    expect(error).toBeInstanceOf(DataApiError);
    expect((error as DataApiError).errorType).toBe('DatabaseResumingException');
    expect(fixture.calls.length - before).toBe(1);
    expect(fixture.operations.at(-1)).toBe('RollbackTransaction');
  });

  it('does not retry other errors', async () => {
    let before = fixture.calls.length;
    const missing = await rejection(sql.query('SELECT * FROM no_such_table'));
    expect((missing as DatabaseError).code).toBe('42P01');
    expect(fixture.calls.length - before).toBe(1);

    before = fixture.calls.length;
    fixture.failNext(1, 'ForbiddenException', 'Not authorized to use the Data API');
    const forbidden = await rejection(sql.query('SELECT 1'));
    expect(forbidden).toBeInstanceOf(DataApiError);
    expect((forbidden as DataApiError).errorType).toBe('ForbiddenException');
    expect((forbidden as Error).message).toBe('Database error (Data API ForbiddenException)');
    expect(fixture.calls.length - before).toBe(1);
  });

  it('waits out a 15 s and a 25 s resume when the deadline allows, on a fake clock', async () => {
    for (const resumeMs of [15_000, 25_000]) {
      // Prepare: the gateway's deadline, 26.5 s away (28 s timeout less its margin).
      const clock = new FakeClock();
      const deadline = clock.now() + 26_500;
      const { wakesAt } = pauseCluster(fixture, clock, resumeMs);
      const paused = new DataApiSql({ client, ...ARNS, clock, deadline: () => deadline });

      // Act
      const rows = await paused.query('SELECT 1 AS one');

      // Assess: answered after the resume, before the deadline.
      expect(rows).toEqual([{ one: 1 }]);
      expect(clock.now()).toBeGreaterThanOrEqual(wakesAt);
      expect(clock.now()).toBeLessThanOrEqual(deadline);
    }
  });

  it('answers UnavailableError with a retry hint when the resume outlasts the deadline, never waiting past it', async () => {
    const clock = new FakeClock();
    const deadline = clock.now() + 26_500;
    pauseCluster(fixture, clock, 60_000);
    const before = fixture.calls.length;
    try {
      const error = await rejection(new DataApiSql({ client, ...ARNS, clock, deadline: () => deadline }).query('SELECT 1'));
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ code: 'unavailable', details: { retry_after_seconds: 10 } });
      expect((error as Error).message).toMatch(/resuming.*Retry in 10 seconds/);
      expect(((error as Error).cause as DataApiError).errorType).toBe('DatabaseResumingException');
    } finally {
      fixture.clearFailures();
    }
    expect(clock.now()).toBeLessThanOrEqual(deadline);
    // Backoff with a 2 s cap: attempts all the way to the deadline, not a handful at the start.
    expect(fixture.calls.length - before).toBeGreaterThanOrEqual(13);
  });

  it('without a deadline, gives up after the time budget from the first attempt', async () => {
    const clock = new FakeClock();
    const started = clock.now();
    pauseCluster(fixture, clock, 60_000);
    try {
      const error = await rejection(new DataApiSql({ client, ...ARNS, clock, timeBudgetMs: 5_000 }).query('SELECT 1'));
      expect(error).toBeInstanceOf(UnavailableError);
    } finally {
      fixture.clearFailures();
    }
    expect(clock.now() - started).toBeLessThanOrEqual(5_000);
    expect(clock.now() - started).toBeGreaterThanOrEqual(4_000);
  });
});

describe('transient service errors', () => {
  const fake = () => {
    const clock = new FakeClock();
    const deadline = clock.now() + 10_000;
    return { clock, sql: new DataApiSql({ client, ...ARNS, clock, deadline: () => deadline }) };
  };

  beforeAll(async () => {
    await sql.query('CREATE TABLE transient_writes (n int)');
  });

  it('retries throttling and ServiceUnavailableError for reads and writes alike (nothing ran)', async () => {
    const { sql: retrying } = fake();
    for (const errorType of ['ThrottlingException', 'TooManyRequestsException', 'ServiceUnavailableError']) {
      const before = fixture.calls.length;
      fixture.failNext(2, errorType, 'slow down');
      await retrying.query('INSERT INTO transient_writes (n) VALUES ($1)', [1]);
      expect(fixture.calls.length - before).toBe(3);
    }
    expect(await sql.query('SELECT count(*)::int AS n FROM transient_writes')).toEqual([{ n: 3 }]);
  });

  it('retries InternalServerErrorException for a read, but not for a write that may have run', async () => {
    const { sql: retrying } = fake();
    let before = fixture.calls.length;
    fixture.failNext(2, 'InternalServerErrorException', 'internal failure');
    expect(await retrying.query('SELECT 7 AS seven')).toEqual([{ seven: 7 }]);
    expect(fixture.calls.length - before).toBe(3);

    before = fixture.calls.length;
    fixture.failNext(1, 'InternalServerErrorException', 'internal failure');
    const error = await rejection(retrying.query('INSERT INTO transient_writes (n) VALUES ($1)', [2]));
    expect((error as DataApiError).errorType).toBe('InternalServerErrorException');
    expect(fixture.calls.length - before).toBe(1);
  });

  it('retries a read whose connection was reset without an answer, but not a write', async () => {
    // What a warm function meets when the far end has closed its kept-alive socket.
    const { sql: retrying } = fake();
    let before = fixture.calls.length;
    fixture.dropNext(1);
    expect(await retrying.query('SELECT 8 AS eight')).toEqual([{ eight: 8 }]);
    expect(fixture.calls.length - before).toBe(2);

    before = fixture.calls.length;
    fixture.dropNext(1);
    const error = await rejection(retrying.query('INSERT INTO transient_writes (n) VALUES ($1)', [3]));
    expect(error).toBeInstanceOf(DatabaseError);
    expect(fixture.calls.length - before).toBe(1);
    const [row] = await retrying.query<{ n: number }>('SELECT count(*)::int AS n FROM transient_writes WHERE n = 3');
    expect(row?.n).toBe(0);
  });

  it('gives up on throttling at the deadline with a short retry hint', async () => {
    const { clock, sql: retrying } = fake();
    const started = clock.now();
    fixture.failNext(Number.MAX_SAFE_INTEGER, 'ThrottlingException', 'slow down');
    try {
      const error = await rejection(retrying.query('SELECT 1'));
      expect(error).toMatchObject({ code: 'unavailable', details: { retry_after_seconds: 2 } });
    } finally {
      fixture.clearFailures();
    }
    expect(clock.now() - started).toBeLessThanOrEqual(10_000);
  });
});

describe('errors', () => {
  it('never carry the SQL text or parameter values', async () => {
    const secret = 'secret-value-4f1c';
    await sql.query('CREATE TABLE private_things (value text UNIQUE)');
    await sql.query('INSERT INTO private_things (value) VALUES ($1)', [secret]);
    const error = await rejection(sql.query('INSERT INTO private_things (value) VALUES ($1)', [secret]));
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).code).toBe('23505');
    // The service's own message does hold the value (in its Detail line)…
    expect(JSON.stringify(fixture.calls.at(-1))).toContain(secret);
    // …and none of it leaves the adapter.
    const everything = [String(error), (error as Error).stack, JSON.stringify(error), JSON.stringify(Object.entries(error as object))].join('\n');
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('private_things');
    expect(everything).not.toContain('INSERT');
    expect((error as Error).cause).toBeUndefined();
  });
});

/** A deterministic bag-of-words embedder (512 dimensions, unit length) for the dense path. */
const hashingEmbedder: Embedder = {
  provider: 'test',
  model: 'hashing-512',
  dimensions: 512,
  async embed(texts) {
    return texts.map((text) => {
      const v = new Float32Array(512);
      for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
        v[createHash('sha256').update(word).digest().readUInt16BE(0) % 512]! += 1;
      }
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  },
};

describe('the core over the Data API', () => {
  let reference: MemoryStore;
  const secrets = { pepper: async () => Buffer.alloc(32, 1) };

  beforeAll(async () => {
    const records = await readRecordFiles(STARTER_CORPUS_DIR);
    const summary = await importRecords(sql, records, { approve: true });
    expect(summary.created).toBe(records.length);
    reference = await memoryStore();
  });

  afterAll(async () => {
    await reference?.sql.close();
  });

  const comparable = ({ id: _id, updated_at: _updated, approved_at: _approved, ...rest }: Record<string, unknown>) => rest;

  // What a failed tool logged (its error's kind, never its text) goes into the failure message.
  const logged: string[] = [];
  const toolLogger = createLogger((line) => logged.push(line));
  const structured = (result: { isError?: boolean; structuredContent?: unknown }) => {
    expect(result.isError, `${JSON.stringify(result.structuredContent)} ${logged.slice(-3).join(' ')}`).toBeFalsy();
    return result.structuredContent as any;
  };

  it('searches by keyword and reads full guidance', async () => {
    const tools = createToolHandlers({ sql, secrets, logger: toolLogger });
    const search = structured(await tools.search_knowledge({ query: 'password hashing algorithm for user accounts' }));
    expect(search.results[0]?.slug).toBe('hash-passwords-with-argon2id-or-bcrypt');
    expect(search.retrieval.mode).toBe('keyword_fallback');

    const guidance = structured(await tools.get_guidance({ ids: ['use-stable-keys-for-dynamic-react-lists'] }));
    expect(guidance.missing).toEqual([]);
    const [record] = guidance.results;
    expect(record).toMatchObject({ slug: 'use-stable-keys-for-dynamic-react-lists', status: 'approved', content_version: 1 });
    expect(Array.isArray(record.conditions)).toBe(true);
    expect(Array.isArray(record.sources) && record.sources.length > 0).toBe(true);
    expect(new Date(record.approved_at).toISOString()).toBe(record.approved_at);

    // The same record and search read through PGlite: identical but for the generated id and times.
    const local = structured(await reference.tools.get_guidance({ ids: ['use-stable-keys-for-dynamic-react-lists'] }));
    expect(comparable(record)).toEqual(comparable(local.results[0]));
    const localSearch = structured(await reference.tools.search_knowledge({ query: 'password hashing algorithm for user accounts' }));
    expect(search.results.map(comparable)).toEqual(localSearch.results.map(comparable));

    // The search event was written (text[] built from jsonb) without the query text.
    const [event] = await sql.query<{ topics: string[]; mode: string; degraded: boolean }>(
      'SELECT topics, mode, degraded FROM search_events ORDER BY id DESC LIMIT 1',
    );
    expect(event).toMatchObject({ topics: [], mode: 'keyword_fallback', degraded: true });
  });

  it('runs the dense path: embeddings, the query cache and vector search in a transaction', async () => {
    const embedded = await embedRecords(sql, hashingEmbedder, await recordsToEmbed(sql, hashingEmbedder.model));
    expect(embedded.embedded).toBeGreaterThan(0);
    expect(await recordsToEmbed(sql, hashingEmbedder.model)).toEqual([]);
    const tools = createToolHandlers({ sql, secrets, embedder: hashingEmbedder, logger: toolLogger });
    const query = { query: 'password hashing algorithm for user accounts' };
    const first = structured(await tools.search_knowledge(query));
    // The test encoder hashes words, so whether its weak similarity admits a record is beside the point:
    // the query was embedded (a cache miss), not degraded, and the second call reused the stored vector.
    expect(first.retrieval).toMatchObject({ degraded: false, embedding_cache: 'miss' });
    const second = structured(await tools.search_knowledge(query));
    expect(second.retrieval).toMatchObject({ degraded: false, embedding_cache: 'hit' });
    expect(second.results).toEqual(first.results);
    const [cached] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM embedding_cache');
    expect(cached?.n).toBe(1);
  });

  it('stores feedback', async () => {
    const tools = createToolHandlers({ sql, secrets, logger: silentLogger });
    const out = structured(await tools.submit_feedback({ category: 'missing', source: 'other', comment: 'no guidance on CSRF tokens' }));
    expect(out.accepted).toBe(true);
    const [row] = await sql.query<{ category: string }>('SELECT category FROM feedback WHERE id = $1::uuid', [out.id]);
    expect(row?.category).toBe('missing');
  });
});
