/**
 * Simulated time for tests of a paused Aurora cluster: a fake clock whose `sleep`
 * moves time forward at once, and a Data API fixture that answers
 * `DatabaseResumingException` to every operation until the clock reaches the end
 * of the resume. No test waits in real time.
 */
import type { RetryClock } from '../../lambdas/storage/data-api-retry.ts';
import type { DataApiFixture } from './data-api-fixture.ts';

const OPERATIONS = ['Execute', 'BeginTransaction', 'CommitTransaction', 'RollbackTransaction'];

export class FakeClock implements RetryClock {
  private time: number;
  private readonly listeners: (() => void)[] = [];

  constructor(start = Date.UTC(2026, 0, 5, 9, 0, 0)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  /** Moves time forward by `ms` and lets other promises run, as a real wait would. */
  async sleep(ms: number): Promise<void> {
    this.advance(ms);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  advance(ms: number): void {
    this.time += Math.max(0, ms);
    for (const listener of this.listeners) listener();
  }

  onAdvance(listener: () => void): void {
    this.listeners.push(listener);
  }
}

/** Pauses the fixture's "cluster": it answers DatabaseResumingException until `resumeMs` of fake time have passed. */
export function pauseCluster(fixture: DataApiFixture, clock: FakeClock, resumeMs: number): { readonly wakesAt: number } {
  const wakesAt = clock.now() + resumeMs;
  const pause = Symbol('pause');
  latestPause.set(fixture, pause);
  fixture.clearFailures();
  fixture.failNext(Number.MAX_SAFE_INTEGER, 'DatabaseResumingException', 'The Aurora DB instance chatctx is resuming after being auto-paused.', OPERATIONS);
  clock.onAdvance(() => {
    // Only the latest pause may end the failures; an earlier one has already ended.
    if (latestPause.get(fixture) === pause && clock.now() >= wakesAt) fixture.clearFailures();
  });
  return { wakesAt };
}

const latestPause = new WeakMap<DataApiFixture, symbol>();
