/**
 * When the Data API adapter tries again, without the service: which errors are
 * transient and why, which statements count as reads, which failures each policy
 * repeats, the backoff between attempts, and giving up before the deadline (or
 * the time budget) with a retry hint. Time is a fake clock that records its waits.
 */
import { describe, expect, it } from 'vitest';
import {
  isReadOnlyStatement,
  isResumingError,
  statementRetryPolicy,
  transientKind,
  withRetries,
  type RetryClock,
  type RetryPolicy,
} from '../../lambdas/storage/data-api-retry.ts';
import { DataApiError } from '../../lambdas/storage/data-api-encoding.ts';
import { UnavailableError } from '../../lambdas/errors/app-error.ts';

const named = (name: string, message = 'failed', extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { name }, extra);
const withStatus = (name: string, status: number) => named(name, 'failed', { $metadata: { httpStatusCode: status } });

/** A clock whose waits pass at once and are written down, with each attempt's start time. */
function recordingClock(start = 1_000_000) {
  let time = start;
  const waits: number[] = [];
  const clock: RetryClock = {
    now: () => time,
    sleep: async (ms) => {
      waits.push(ms);
      time += ms;
    },
  };
  return { clock, waits, elapsed: () => time - start };
}

/** Runs `withRetries` over attempts that fail with `failures` in turn (the first one for ever when `forever`), then answer 'done'. */
async function run(policy: RetryPolicy, failures: unknown[], timing: { deadlineMs?: number; timeBudgetMs?: number; random?: number; forever?: boolean } = {}) {
  const { clock, waits, elapsed } = recordingClock();
  const deadline = timing.deadlineMs === undefined ? undefined : clock.now() + timing.deadlineMs;
  const starts: number[] = [];
  let attempts = 0;
  const attempt = async () => {
    starts.push(elapsed());
    attempts += 1;
    if (timing.forever) throw failures[0];
    if (attempts <= failures.length) throw failures[attempts - 1];
    return 'done';
  };
  const outcome = await withRetries(
    { deadline: () => deadline, timeBudgetMs: timing.timeBudgetMs ?? 20_000, clock, random: () => timing.random ?? 0 },
    attempt,
    policy,
  ).then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
  return { ...outcome, attempts, waits, starts, elapsed: elapsed() };
}

describe('transient errors', () => {
  const COMMUNICATIONS =
    'Communications link failure\n\nThe last packet sent successfully to the server was 0 milliseconds ago. The driver has not received any packets from the server.';

  it('recognises the resuming errors and nothing else', () => {
    expect(isResumingError(named('DatabaseResumingException', 'The Aurora DB instance is resuming after being auto-paused.'))).toBe(true);
    expect(isResumingError(named('DatabaseUnavailableException', 'The writer instance in the DB cluster is not available.'))).toBe(true);
    expect(isResumingError(named('BadRequestException', COMMUNICATIONS))).toBe(true);
    expect(isResumingError(named('BadRequestException', 'Database chatctx is resuming, please retry'))).toBe(true);
    expect(isResumingError(named('BadRequestException', 'DatabaseNotFoundException: the database is resuming'))).toBe(true);
    expect(isResumingError(named('BadRequestException', 'ERROR: relation "x" does not exist; SQLState: 42P01'))).toBe(false);
    expect(isResumingError(named('ForbiddenException', 'is resuming'))).toBe(false);
    expect(isResumingError('Communications link failure')).toBe(false);
  });

  it('says why each transient failure is worth another attempt', () => {
    expect(transientKind(named('DatabaseResumingException'))).toBe('resuming');
    expect(transientKind(named('ThrottlingException'))).toBe('throttled');
    expect(transientKind(withStatus('SomethingElse', 429))).toBe('throttled');
    expect(transientKind(named('ServiceUnavailableError'))).toBe('refused');
    expect(transientKind(withStatus('SomethingElse', 503))).toBe('refused');
    expect(transientKind(named('Error', 'connect', { code: 'ECONNREFUSED' }))).toBe('refused');
    expect(transientKind(named('InternalServerErrorException'))).toBe('server');
    expect(transientKind(withStatus('SomethingElse', 502))).toBe('server');
    expect(transientKind(named('Error', 'socket hang up', { code: 'ECONNRESET' }))).toBe('network');
    expect(transientKind(named('TimeoutError'))).toBe('network');
  });

  it('leaves SQL errors, refusals and answered requests alone', () => {
    expect(transientKind(named('BadRequestException', 'ERROR: syntax error; SQLState: 42601'))).toBeUndefined();
    expect(transientKind(withStatus('ForbiddenException', 403))).toBeUndefined();
    // An HTTP answer arrived, so a socket code on the same error does not make it a lost connection.
    expect(transientKind(named('BadRequestException', 'failed', { $metadata: { httpStatusCode: 400 }, code: 'ECONNRESET' }))).toBeUndefined();
    expect(transientKind(new Error('plain'))).toBeUndefined();
    expect(transientKind(undefined)).toBeUndefined();
  });
});

describe('policies', () => {
  it('tells read-only statements from the rest', () => {
    expect(isReadOnlyStatement('SELECT id FROM records WHERE slug = :p1')).toBe(true);
    expect(isReadOnlyStatement('-- the count\n  WITH x AS (SELECT 1) SELECT * FROM x')).toBe(true);
    expect(isReadOnlyStatement('SELECT updated_at, last_update FROM records')).toBe(true);
    expect(isReadOnlyStatement('WITH moved AS (DELETE FROM a RETURNING *) SELECT * FROM moved')).toBe(false);
    expect(isReadOnlyStatement('SELECT id FROM records FOR UPDATE')).toBe(false);
    expect(isReadOnlyStatement('SELECT nextval(\'s\')')).toBe(false);
    expect(isReadOnlyStatement('UPDATE api_keys SET last_used_at = now()')).toBe(false);
  });

  it('retries nothing in a transaction, anything for a read, and only "nothing ran" for the rest', () => {
    expect(statementRetryPolicy('SELECT 1', true)).toBe('none');
    expect(statementRetryPolicy('SELECT 1', false)).toBe('any');
    expect(statementRetryPolicy('INSERT INTO t VALUES (1)', false)).toBe('nothing-ran');
  });

  it('repeat what each policy allows and pass anything else on as a DataApiError', async () => {
    const server = named('InternalServerErrorException');
    const reset = named('Error', 'socket hang up', { code: 'ECONNRESET' });
    const throttled = named('ThrottlingException');
    expect(await run('any', [server, reset])).toMatchObject({ value: 'done', attempts: 3 });
    expect(await run('nothing-ran', [throttled, named('DatabaseResumingException')])).toMatchObject({ value: 'done', attempts: 3 });
    for (const [policy, failure] of [['nothing-ran', server], ['nothing-ran', reset], ['none', throttled], ['any', named('ForbiddenException')]] as const) {
      const { error, attempts } = await run(policy, [failure]);
      expect(error).toBeInstanceOf(DataApiError);
      expect((error as DataApiError).errorType).toBe(failure.name);
      expect(attempts).toBe(1);
    }
  });
});

describe('timing', () => {
  it('backs off in steps from 250 ms doubling to a 2 s cap, waiting at least half of each step', async () => {
    const resuming = named('DatabaseResumingException');
    expect((await run('any', [resuming, resuming, resuming, resuming, resuming])).waits).toEqual([125, 250, 500, 1000, 1000]);
    const halfway = (await run('any', [resuming, resuming, resuming, resuming, resuming], { random: 0.5 })).waits;
    expect(halfway).toEqual([187.5, 375, 750, 1500, 1500]);
  });

  it('gives up before the deadline with the failure kind\'s retry hint, the last attempt starting 100 ms before it', async () => {
    for (const [failure, seconds] of [[named('DatabaseResumingException'), 10], [named('ThrottlingException'), 2], [named('InternalServerErrorException'), 5]] as const) {
      const { error, starts, elapsed } = await run('any', [failure], { deadlineMs: 10_000, forever: true });
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ code: 'unavailable', details: { retry_after_seconds: seconds } });
      expect(((error as Error).cause as DataApiError).errorType).toBe(failure.name);
      expect(Math.max(...starts)).toBe(9_900);
      expect(elapsed).toBe(9_900);
    }
  });

  it('without a deadline, keeps to the time budget from the first attempt', async () => {
    const { error, elapsed } = await run('any', [named('ThrottlingException')], { timeBudgetMs: 5_000, forever: true });
    expect(error).toBeInstanceOf(UnavailableError);
    expect(elapsed).toBe(4_900);
  });
});
