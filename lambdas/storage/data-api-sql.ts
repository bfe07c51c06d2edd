/**
 * `Sql` over the Aurora (PostgreSQL) RDS Data API, the adapter used on AWS.
 *
 * Owns: translating the port's positional statements (`$1`, `$2`, …) to the Data
 * API's named parameters (`:p1`, `:p2`, …) and typed values; decoding the JSON
 * result format into row objects; mapping `transaction(work)` onto Begin/Commit/
 * RollbackTransaction; retrying transient failures (a paused Aurora Serverless v2
 * cluster resuming, throttling, the service's 5xx) with backoff and jitter until
 * the invocation's deadline; and making sure no error that leaves this module
 * carries SQL text or parameter values (it throws a `DatabaseError` holding at most
 * the SQLSTATE and the Data API's error name, or an `UnavailableError` when a
 * transient failure outlasted the deadline).
 *
 * Which failures are retried, and where (`retryPolicy`):
 * - a statement inside a transaction, Commit and Rollback: never (the transaction's
 *   state after an unclear failure is not ours to guess);
 * - any other statement: the failures that mean "nothing ran" (resuming, throttled,
 *   `ServiceUnavailableError`);
 * - a statement that only reads, and BeginTransaction: also
 *   `InternalServerErrorException` and other 5xx, where the statement may have run,
 *   which is harmless only when it changed nothing.
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
import { UnavailableError } from '../errors/app-error.ts';
import { DatabaseError } from './database-error.ts';
import { normalizeRows } from './row-values.ts';

export interface DataApiSqlOptions {
  /** Defaults to a client with the SDK's own retries off (`maxAttempts: 1`): see `send`. */
  client?: RDSDataClient;
  resourceArn: string;
  secretArn: string;
  database: string;
  /**
   * The epoch millisecond after which no new attempt starts, read once per
   * statement: the time by which the running invocation must stop waiting and
   * answer (a Lambda sets it per invocation from its remaining time, see
   * `lambdas/aws/invocation-deadline.ts`). When absent or returning undefined,
   * `timeBudgetMs` counted from the first attempt applies instead.
   */
  deadline?: () => number | undefined;
  /** Longest time one statement (or BeginTransaction) may spend retrying when there is no deadline. @default 20000 */
  timeBudgetMs?: number;
  /** The clock the retries read and wait on; tests pass a fake one. @default SYSTEM_CLOCK */
  clock?: RetryClock;
  /** Jitter source in [0, 1). @default Math.random */
  random?: () => number;
}

/** Time as the retry loop sees it. */
export interface RetryClock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: RetryClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

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

/** Error names the AWS SDKs classify as throttling (the Data API declares none of its own). */
const THROTTLING_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
]);

/**
 * Why a failure is worth another attempt, or undefined when it is not:
 * - `resuming`: the cluster is paused or waking (`isResumingError`); nothing ran;
 * - `throttled`: a throttling error name or HTTP 429; nothing ran;
 * - `refused`: `ServiceUnavailableError` (HTTP 503); nothing ran;
 * - `server`: `InternalServerErrorException` or another 5xx; the statement may have run;
 * - `network`: no HTTP answer at all (a reset or timed-out connection, typically a
 *   kept-alive socket the far end closed while the function sat warm); the request
 *   may have arrived, so like `server` it is retried for reads only. A refused
 *   connection never delivered anything and counts as `refused`.
 */
export type TransientKind = 'resuming' | 'throttled' | 'refused' | 'server' | 'network';

/** Socket errors that leave no HTTP answer; the SDK's own retries are off (see `send`), so these are ours. */
const NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);

export function transientKind(error: unknown): TransientKind | undefined {
  if (isResumingError(error)) return 'resuming';
  if (!error || typeof error !== 'object') return undefined;
  const name = (error as { name?: unknown }).name;
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  if ((typeof name === 'string' && THROTTLING_NAMES.has(name)) || status === 429) return 'throttled';
  if (name === 'ServiceUnavailableError' || status === 503) return 'refused';
  if (name === 'InternalServerErrorException' || (typeof status === 'number' && status >= 500 && status <= 599)) return 'server';
  if (typeof status === 'number') return undefined;
  const code = (error as { code?: unknown }).code;
  if (code === 'ECONNREFUSED') return 'refused';
  if ((typeof code === 'string' && NETWORK_CODES.has(code)) || name === 'TimeoutError') return 'network';
  return undefined;
}

/** Which transient failures a call may retry (see the header). */
type RetryPolicy = 'none' | 'nothing-ran' | 'any';

const NOTHING_RAN: ReadonlySet<TransientKind> = new Set(['resuming', 'throttled', 'refused']);

/**
 * True for a statement that can only read: it starts with SELECT, WITH, VALUES,
 * SHOW or TABLE and names no data-changing command or sequence function. A false
 * "no" only costs a retry; a false "yes" could repeat a write, so this is strict.
 */
export function isReadOnlyStatement(text: string): boolean {
  const body = text.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ').trim();
  if (!/^(select|with|values|show|table)\b/i.test(body)) return false;
  return !/\b(insert|update|delete|merge|truncate|nextval|setval|lock|for\s+(no\s+key\s+)?(update|share)|into)\b/i.test(body);
}

/** First delay, growth and cap of the backoff between attempts. */
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 2000;
/** The last attempt starts at least this long before the deadline, so its answer still fits. */
const LAST_ATTEMPT_MS = 100;

function backoffMs(attempt: number, random: () => number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt);
  // "Equal jitter": at least half the step, so attempts never bunch up at zero.
  return ceiling / 2 + random() * (ceiling / 2);
}

/** What the caller is told when a transient failure outlasts the deadline. */
const GAVE_UP: Record<TransientKind, { what: string; retryAfterSeconds: number }> = {
  // AWS documents a resume of up to about 15 s; by now most of it has passed, and it continues without us.
  resuming: { what: 'The database is resuming after a pause', retryAfterSeconds: 10 },
  throttled: { what: 'The database service is busy', retryAfterSeconds: 2 },
  refused: { what: 'The database service is temporarily unavailable', retryAfterSeconds: 5 },
  server: { what: 'The database service is temporarily unavailable', retryAfterSeconds: 5 },
  network: { what: 'The database service could not be reached', retryAfterSeconds: 5 },
};

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
  readonly deadline: () => number | undefined;
  readonly timeBudgetMs: number;
  readonly clock: RetryClock;
  readonly random: () => number;
}

/**
 * Sends one command; tries again with backoff after the transient failures
 * `policy` allows, until the deadline (or the time budget from the first attempt):
 * the last attempt starts `LAST_ATTEMPT_MS` before it. A transient failure still
 * there at the end leaves as an `UnavailableError`, any other failure as a
 * `DataApiError`.
 */
async function send<T>(connection: Connection, call: (client: RDSDataClient) => Promise<T>, policy: RetryPolicy): Promise<T> {
  const { clock } = connection;
  const stopAt = connection.deadline() ?? clock.now() + connection.timeBudgetMs;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call(connection.client);
    } catch (error) {
      const kind = policy === 'none' ? undefined : transientKind(error);
      if (!kind || (policy === 'nothing-ran' && !NOTHING_RAN.has(kind))) throw toDatabaseError(error);
      const left = stopAt - clock.now() - LAST_ATTEMPT_MS;
      if (left <= 0) throw new UnavailableError(GAVE_UP[kind].retryAfterSeconds, GAVE_UP[kind].what, { cause: toDatabaseError(error) });
      await clock.sleep(Math.min(backoffMs(attempt, connection.random), left));
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
    transactionId !== undefined ? 'none' : isReadOnlyStatement(sql) ? 'any' : 'nothing-ran',
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
      // (a reset connection, a 5xx), also inside a transaction, and would not know
      // the invocation's deadline; `send` retries instead, by the rules in the header.
      client: options.client ?? new RDSDataClient({ maxAttempts: 1 }),
      resourceArn: options.resourceArn,
      secretArn: options.secretArn,
      database: options.database,
      deadline: options.deadline ?? (() => undefined),
      timeBudgetMs: options.timeBudgetMs ?? 20_000,
      clock: options.clock ?? SYSTEM_CLOCK,
      random: options.random ?? Math.random,
    };
  }

  query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    return execute<Row>(this.connection, text, params, undefined, options);
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    const { resourceArn, secretArn, database } = this.connection;
    // BeginTransaction is the one call of a transaction that may be retried: nothing is open yet.
    const begun = await send(this.connection, (client) => client.send(new BeginTransactionCommand({ resourceArn, secretArn, database })), 'any');
    const transactionId = begun.transactionId;
    if (!transactionId) throw new DataApiError(undefined, 'NoTransactionId');
    const tx = new DataApiTransaction(this.connection, transactionId);
    const rollback = () =>
      send(this.connection, (client) => client.send(new RollbackTransactionCommand({ resourceArn, secretArn, transactionId })), 'none').catch(() => undefined);
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
      await send(this.connection, (client) => client.send(new CommitTransactionCommand({ resourceArn, secretArn, transactionId })), 'none');
    } catch (error) {
      // The commit failed (Postgres has then rolled back, or the call never arrived):
      // make sure nothing stays open, and report the failure.
      await rollback();
      throw error;
    }
    return result;
  }
}
