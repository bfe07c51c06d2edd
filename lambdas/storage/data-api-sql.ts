/**
 * `Sql` over the Aurora (PostgreSQL) RDS Data API, the adapter used on AWS.
 *
 * Owns: translating the port's positional statements (`$1`, `$2`, …) to the Data
 * API's named parameters (`:p1`, `:p2`, …) and typed values; decoding the JSON
 * result format into row objects; mapping `transaction(work)` onto Begin/Commit/
 * RollbackTransaction; retrying while a paused Aurora Serverless v2 cluster
 * resumes (bounded by a time budget); and making sure no error that leaves this
 * module carries SQL text or parameter values (it throws a `DatabaseError`
 * holding at most the SQLSTATE and the Data API's error name).
 *
 * Does not own: the SQL itself (the core writes statements that run unchanged on
 * PGlite and here), credentials (the secret ARN is resolved by the Data API), the
 * cluster's lifecycle, or schema migrations (`migrations.ts` runs through this).
 *
 * Encoding decisions (the Data API's PostgreSQL driver binds values as typed):
 * - string → `stringValue` (bound as varchar: a non-text column needs an explicit
 *   cast in the SQL, e.g. `$1::uuid`, `$2::jsonb`, `$3::vector`, `$4::text[]`);
 * - integer number → `longValue` (bigint); other numbers → `doubleValue` (float8);
 * - boolean → `booleanValue`; null/undefined → `isNull: true` (untyped);
 * - only the parameters the statement references are sent.
 *
 * Decoding (`formatRecordsAs: 'JSON'`, `decimalReturnType: 'STRING'`,
 * `longReturnType: 'LONG'`, which matches what PGlite returns for those types):
 * - int2/int4/int8, float4/float8 → numbers; numeric → string; boolean → boolean;
 * - uuid, text, vector, tsvector, date → strings; text[] and other arrays → arrays;
 * - json/jsonb → the JSON *text*: with JSON formatting the Data API sends no
 *   column metadata, so a jsonb value cannot be told from a text value holding
 *   JSON. The columns a query names in `options.json` are parsed here
 *   (`row-values.ts`), so callers get what PGlite gives them;
 * - timestamp/timestamptz → the Data API sends `YYYY-MM-DD HH:MM:SS[.ffffff]` in
 *   UTC without a zone, which `new Date()` would read as *local* time. Top-level
 *   string values of exactly that shape are rewritten to ISO-8601 UTC with
 *   milliseconds, the port's form (`row-values.ts`). It would also touch a text
 *   column holding exactly that shape, which the core never reads.
 */
import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  RDSDataClient,
  RollbackTransactionCommand,
  type SqlParameter,
} from '@aws-sdk/client-rds-data';
import type { QueryOptions, Sql, SqlParam } from '../ports/sql.ts';
import { DatabaseError } from './database-error.ts';
import { normalizeRows } from './row-values.ts';

export interface DataApiSqlOptions {
  /** Defaults to a client with the SDK's own retries off (`maxAttempts: 1`): see `send`. */
  client?: RDSDataClient;
  resourceArn: string;
  secretArn: string;
  database: string;
  /** Longest time one statement (or BeginTransaction) may spend retrying a resuming cluster. @default 8000 */
  timeBudgetMs?: number;
}

/**
 * A database failure with no SQL text and no parameter values: the SQLSTATE when
 * the Data API's message carries one (`…; SQLState: 23505`), and the Data API's
 * error name (e.g. `DatabaseResumingException`, `ForbiddenException`), which is a
 * fixed identifier and safe to log.
 */
export class DataApiError extends DatabaseError {
  readonly errorType: string | undefined;
  constructor(code: string | undefined, errorType: string | undefined) {
    super(code);
    this.errorType = errorType;
    if (!code && errorType) this.message = `Database error (Data API ${errorType})`;
  }
}

/**
 * True when `error` says the Aurora Serverless v2 cluster is paused or resuming,
 * i.e. the statement did not run and trying again shortly is the right answer:
 * - `DatabaseResumingException` (current SDKs; older ones surface the same name
 *   or mention it in the message);
 * - `DatabaseUnavailableException` (the writer is not available yet);
 * - `BadRequestException` / `DatabaseNotFoundException` whose message says
 *   "Communications link failure", "is resuming", "resuming after being
 *   auto-paused", or "DatabaseNotFound… resuming" (what the API answered before
 *   the dedicated exception existed).
 * Any other error (SQL errors, access, secrets, timeouts) is not retried.
 */
export function isResumingError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const name = typeof (error as { name?: unknown }).name === 'string' ? (error as { name: string }).name : '';
  const message = typeof (error as { message?: unknown }).message === 'string' ? (error as { message: string }).message : '';
  if (name === 'DatabaseResumingException' || name === 'DatabaseUnavailableException') return true;
  if (/DatabaseResumingException/.test(message)) return true;
  if (name === 'BadRequestException' || name === 'DatabaseNotFoundException') {
    return /communications link failure|is resuming|resuming after being auto-paused|DatabaseNotFound[\s\S]*resuming/i.test(message);
  }
  return false;
}

/** First delay, growth and cap of the backoff between attempts against a resuming cluster. */
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 2000;

function backoffMs(attempt: number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt);
  // "Equal jitter": at least half the step, so attempts never bunch up at zero.
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function toDatabaseError(error: unknown): DataApiError {
  if (error instanceof DataApiError) return error;
  const message = error && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
  const name = error && typeof error === 'object' ? (error as { name?: unknown }).name : undefined;
  const code = typeof message === 'string' ? /SQLState:\s*([0-9A-Z]{5})/i.exec(message)?.[1]?.toUpperCase() : undefined;
  return new DataApiError(code, typeof name === 'string' && /^[A-Za-z]{1,64}$/.test(name) ? name : undefined);
}

/**
 * Rewrites `$n` placeholders to `:pn`, leaving string literals ('…', E'…'),
 * quoted identifiers ("…"), dollar-quoted text ($tag$…$tag$) and comments alone.
 * Returns the rewritten text and the (1-based) parameter numbers it references.
 */
export function toNamedParameters(text: string): { sql: string; used: number[] } {
  let out = '';
  const used = new Set<number>();
  let i = 0;
  const n = text.length;
  const isIdentChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "'") {
      // E'…' allows backslash escapes; standard strings only double the quote.
      const escapes = (text[i - 1] === 'E' || text[i - 1] === 'e') && !isIdentChar(text[i - 2]);
      let j = i + 1;
      while (j < n) {
        if (escapes && text[j] === '\\') j += 2;
        else if (text[j] === "'" && text[j + 1] === "'") j += 2;
        else if (text[j] === "'") break;
        else j += 1;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < n && !(text[j] === '"' && text[j + 1] !== '"')) j += text[j] === '"' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      const j = end === -1 ? n : end;
      out += text.slice(i, j);
      i = j;
    } else if (c === '/' && next === '*') {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (text[j] === '/' && text[j + 1] === '*') (depth += 1), (j += 2);
        else if (text[j] === '*' && text[j + 1] === '/') (depth -= 1), (j += 2);
        else j += 1;
      }
      out += text.slice(i, j);
      i = j;
    } else if (c === '$' && !isIdentChar(text[i - 1])) {
      const param = /^\$(\d+)/.exec(text.slice(i, i + 12));
      if (param) {
        const number = Number(param[1]);
        used.add(number);
        out += `:p${number}`;
        i += param[0].length;
        continue;
      }
      const tag = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(text.slice(i, i + 70));
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        const j = close === -1 ? n : close + tag[0].length;
        out += text.slice(i, j);
        i = j;
        continue;
      }
      out += c;
      i += 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return { sql: out, used: [...used].sort((a, b) => a - b) };
}

/** The Data API's typed value for one port parameter. */
export function toDataApiValue(value: SqlParam | undefined): SqlParameter['value'] {
  if (value === null || value === undefined) return { isNull: true };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { booleanValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { longValue: value } : { doubleValue: value };
  throw new TypeError(`Unsupported SQL parameter type: ${typeof value}`);
}

/** Parses `formattedRecords` into the port's row values (see the header and `row-values.ts`). */
export function decodeRecords<Row>(formatted: string | undefined, options: QueryOptions = {}): Row[] {
  if (!formatted) return [];
  return normalizeRows<Row>(JSON.parse(formatted) as Record<string, unknown>[], options);
}

interface Connection {
  readonly client: RDSDataClient;
  readonly resourceArn: string;
  readonly secretArn: string;
  readonly database: string;
  readonly timeBudgetMs: number;
}

/**
 * Sends one command; with `retry`, tries again with backoff while the cluster is
 * resuming, but never starts an attempt that would end past the time budget
 * (counted from the first attempt). Every failure leaves as a `DataApiError`.
 */
async function send<T>(connection: Connection, call: (client: RDSDataClient) => Promise<T>, retry: boolean): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call(connection.client);
    } catch (error) {
      if (!retry || !isResumingError(error)) throw toDatabaseError(error);
      const delay = backoffMs(attempt);
      if (Date.now() - started + delay >= connection.timeBudgetMs) throw toDatabaseError(error);
      await sleep(delay);
    }
  }
}

async function execute<Row>(
  connection: Connection,
  text: string,
  params: readonly SqlParam[],
  transactionId: string | undefined,
  options: QueryOptions,
): Promise<Row[]> {
  const { sql, used } = toNamedParameters(text);
  const missing = used.find((number) => number < 1 || number > params.length);
  // Postgres' own answer to a placeholder without a value (42P02, undefined_parameter).
  if (missing !== undefined) throw new DataApiError('42P02', undefined);
  const parameters: SqlParameter[] = used.map((number) => ({ name: `p${number}`, value: toDataApiValue(params[number - 1]) }));
  const output = await send(
    connection,
    (client) =>
      client.send(
        new ExecuteStatementCommand({
          resourceArn: connection.resourceArn,
          secretArn: connection.secretArn,
          database: connection.database,
          sql,
          parameters,
          transactionId,
          formatRecordsAs: 'JSON',
          resultSetOptions: { decimalReturnType: 'STRING', longReturnType: 'LONG' },
        }),
      ),
    transactionId === undefined,
  );
  try {
    return decodeRecords<Row>(output.formattedRecords, options);
  } catch {
    throw new DataApiError(undefined, 'UnreadableResult');
  }
}

/** The `Sql` handed to `transaction(work)`: bound to one open transaction, never retried. */
class DataApiTransaction implements Sql {
  private open = true;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly connection: Connection,
    readonly transactionId: string,
  ) {}

  query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    // One statement at a time per transaction, as on a single connection.
    const run = this.queue.then(() => {
      if (!this.open) throw new Error('This transaction has already ended.');
      return execute<Row>(this.connection, text, params, this.transactionId, options);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Nested transactions reuse the open one (no savepoints), as the PGlite adapter does. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return work(this);
  }

  /** Waits for the statements already queued, then refuses any more. */
  async close(): Promise<void> {
    await this.queue;
    this.open = false;
  }
}

export class DataApiSql implements Sql {
  private readonly connection: Connection;

  constructor(options: DataApiSqlOptions) {
    this.connection = {
      // The SDK's own retries would resend a statement after an ambiguous failure
      // (a reset connection, a 5xx), also inside a transaction; only the resuming
      // retry below, whose errors mean "nothing ran", is wanted.
      client: options.client ?? new RDSDataClient({ maxAttempts: 1 }),
      resourceArn: options.resourceArn,
      secretArn: options.secretArn,
      database: options.database,
      timeBudgetMs: options.timeBudgetMs ?? 8000,
    };
  }

  query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    return execute<Row>(this.connection, text, params, undefined, options);
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    const { resourceArn, secretArn, database } = this.connection;
    // BeginTransaction is the one call of a transaction that may be retried: nothing is open yet.
    const begun = await send(this.connection, (client) => client.send(new BeginTransactionCommand({ resourceArn, secretArn, database })), true);
    const transactionId = begun.transactionId;
    if (!transactionId) throw new DataApiError(undefined, 'NoTransactionId');
    const tx = new DataApiTransaction(this.connection, transactionId);
    const rollback = () =>
      send(this.connection, (client) => client.send(new RollbackTransactionCommand({ resourceArn, secretArn, transactionId })), false).catch(() => undefined);
    let result: T;
    try {
      result = await work(tx);
      await tx.close();
    } catch (error) {
      await tx.close().catch(() => undefined);
      await rollback();
      throw error;
    }
    try {
      await send(this.connection, (client) => client.send(new CommitTransactionCommand({ resourceArn, secretArn, transactionId })), false);
    } catch (error) {
      // The commit failed (Postgres has then rolled back, or the call never arrived):
      // make sure nothing stays open, and report the failure.
      await rollback();
      throw error;
    }
    return result;
  }
}
