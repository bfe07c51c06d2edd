/**
 * When the Data API adapter (`data-api-sql.ts`) tries a call again: which failures
 * are transient (a paused Aurora Serverless v2 cluster resuming, throttling, the
 * service's 5xx, a connection lost without an answer), which calls may repeat
 * them, and how long to keep trying (backoff with jitter until the invocation's
 * deadline, or a time budget when there is none). A transient failure that
 * outlasts the deadline leaves as an `UnavailableError` with a retry hint for the
 * caller; any other failure as a `DataApiError` (`data-api-encoding.ts`).
 *
 * Which failures are retried, and where (`RetryPolicy`, `statementRetryPolicy`):
 * - a statement inside a transaction, Commit and Rollback: never (the transaction's
 *   state after an unclear failure is not ours to guess);
 * - any other statement: the failures that mean "nothing ran" (resuming, throttled,
 *   `ServiceUnavailableError`);
 * - a statement that only reads, and BeginTransaction: also
 *   `InternalServerErrorException` and other 5xx, where the statement may have run,
 *   which is harmless only when it changed nothing.
 *
 * The SDK's own retries are off in the adapter's client, so every retry is one of
 * these: the SDK would resend after an ambiguous failure, also inside a
 * transaction, and does not know the invocation's deadline.
 */
import { UnavailableError } from '../errors/app-error.ts';
import { toDatabaseError } from './data-api-encoding.ts';

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

/** How long one call may keep trying, and the clock and jitter it does it with. */
export interface RetryTiming {
  /** The epoch millisecond after which no new attempt starts, read once per call; undefined: `timeBudgetMs` applies. */
  readonly deadline: () => number | undefined;
  /** Longest time one call may spend retrying when there is no deadline, counted from its first attempt. */
  readonly timeBudgetMs: number;
  readonly clock: RetryClock;
  /** Jitter source in [0, 1). */
  readonly random: () => number;
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

/** Socket errors that leave no HTTP answer; with the SDK's retries off, these are ours (see the header). */
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
export type RetryPolicy = 'none' | 'nothing-ran' | 'any';

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

/** The policy for one statement: none inside a transaction, any failure for a read, else only "nothing ran". */
export function statementRetryPolicy(sql: string, inTransaction: boolean): RetryPolicy {
  if (inTransaction) return 'none';
  return isReadOnlyStatement(sql) ? 'any' : 'nothing-ran';
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

/**
 * Runs `attempt`; tries again with backoff after the transient failures `policy`
 * allows, until the deadline (or the time budget from the first attempt): the last
 * attempt starts `LAST_ATTEMPT_MS` before it. A transient failure still there at
 * the end leaves as an `UnavailableError`, any other failure as a `DataApiError`.
 */
export async function withRetries<T>(timing: RetryTiming, attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const { clock } = timing;
  const stopAt = timing.deadline() ?? clock.now() + timing.timeBudgetMs;
  for (let tries = 0; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      const kind = policy === 'none' ? undefined : transientKind(error);
      if (!kind || (policy === 'nothing-ran' && !NOTHING_RAN.has(kind))) throw toDatabaseError(error);
      const left = stopAt - clock.now() - LAST_ATTEMPT_MS;
      if (left <= 0) throw new UnavailableError(GAVE_UP[kind].retryAfterSeconds, GAVE_UP[kind].what, { cause: toDatabaseError(error) });
      await clock.sleep(Math.min(backoffMs(tries, timing.random), left));
    }
  }
}
