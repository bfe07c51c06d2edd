/**
 * The time by which the running Lambda invocation must stop waiting and answer.
 *
 * Owns: turning the Lambda context's remaining time (and, for a tool function, the
 * deadline its caller sent) into one answer-by instant, and keeping it for the
 * duration of one invocation, so that everything the invocation awaits (the Data
 * API retries, a tool Invoke) reads the same instant without it being passed
 * through the core. The scope follows the invocation's async work
 * (`AsyncLocalStorage`), so it is right even when two entries share a process, as
 * in tests.
 *
 * Does not own: what happens at the deadline (the Data API adapter gives up with
 * an `UnavailableError`; the protocol layer turns that into a retryable answer), or
 * the functions' timeouts (set by the stack).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { SYSTEM_CLOCK, type RetryClock } from '../storage/data-api-retry.ts';

/** What an entry needs from the Lambda context. */
export interface RemainingTime {
  getRemainingTimeInMillis(): number;
}

interface Scope {
  readonly deadline: number | undefined;
  readonly clock: RetryClock;
}

const scope = new AsyncLocalStorage<Scope>();

/**
 * Time kept back from the gateway's remaining time: the answer still has to be
 * framed and returned, and API Gateway (29 s) also counts the cold start, which the
 * Lambda's own timeout (28 s) does not.
 */
export const GATEWAY_MARGIN_MS = 1_500;
/** Time kept back from a tool function's remaining time to return its result. */
export const TOOL_MARGIN_MS = 1_000;
/** Time a tool Invoke needs to come back to the gateway: the caller's deadline sent to a tool is this much earlier. */
export const INVOKE_RETURN_MS = 500;

export interface InvocationOptions {
  /** Kept back from the remaining time. */
  readonly marginMs: number;
  /** An earlier answer-by instant from the caller (epoch ms), e.g. the gateway's for a tool. */
  readonly callerDeadline?: number;
  /** @default the enclosing scope's clock (see `runWithClock`), else SYSTEM_CLOCK */
  readonly clock?: RetryClock;
}

/** Runs one invocation with its deadline: the remaining time less the margin, or the caller's, whichever comes first. */
export function withInvocationDeadline<T>(context: RemainingTime | undefined, options: InvocationOptions, run: () => Promise<T>): Promise<T> {
  const clock = options.clock ?? currentClock();
  const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
  const own = remaining === undefined ? undefined : clock.now() + remaining - options.marginMs;
  const caller = Number.isFinite(options.callerDeadline) ? options.callerDeadline : undefined;
  const candidates = [own, caller].filter((value): value is number => value !== undefined);
  return scope.run({ deadline: candidates.length === 0 ? undefined : Math.min(...candidates), clock }, run);
}

/**
 * Runs `run` with `clock` as the time source of every invocation inside it, and no
 * deadline of its own: how a simulation (a test of a paused cluster) drives the real
 * entries on a fake clock.
 */
export function runWithClock<T>(clock: RetryClock, run: () => Promise<T>): Promise<T> {
  return scope.run({ deadline: undefined, clock }, run);
}

/** The running invocation's answer-by instant (epoch ms), or undefined outside one. */
export function currentDeadline(): number | undefined {
  return scope.getStore()?.deadline;
}

/** The clock of the running invocation (the system clock outside one). */
export function currentClock(): RetryClock {
  return scope.getStore()?.clock ?? SYSTEM_CLOCK;
}

/** A clock that is always the running invocation's: what adapters built once per cold start use. */
export const INVOCATION_CLOCK: RetryClock = {
  now: () => currentClock().now(),
  sleep: (ms) => currentClock().sleep(ms),
};
