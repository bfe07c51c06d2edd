/**
 * What every `Secrets` adapter promises (`lambdas/ports/secrets.ts`), as one suite
 * that runs against each adapter: a pepper of at least 32 bytes that stays the
 * same across calls and across a new instance (so keys and hashes survive a
 * restart or a cold start), a failure that is not remembered, and errors that
 * never quote what the backing store holds.
 */
import { expect, it } from 'vitest';
import { describeContract, type UnderTest } from './contract.ts';
import type { Secrets } from '../../lambdas/ports/secrets.ts';

export interface SecretsUnderTest extends UnderTest {
  /** A new adapter instance over the same backing store. */
  instance(): Secrets;
  /** Makes the backing store hold `value` instead of a valid pepper. */
  corrupt(value: string): Promise<void>;
  /** Puts the valid pepper back. */
  restore(): Promise<void>;
}

export function describeSecretsContract(adapter: string, open: () => Promise<SecretsUnderTest>): void {
  describeContract('Secrets', adapter, open, (subject) => {
    it('gives a pepper of at least 32 bytes, the same on every call and to concurrent callers', async () => {
      const secrets = subject().instance();
      const [first, ...concurrent] = await Promise.all([secrets.pepper(), secrets.pepper(), secrets.pepper()]);
      expect(first!.length).toBeGreaterThanOrEqual(32);
      for (const pepper of [...concurrent, await secrets.pepper()]) expect(pepper.equals(first!)).toBe(true);
    });

    it('gives a new instance over the same store the same pepper', async () => {
      const before = await subject().instance().pepper();
      const after = await subject().instance().pepper();
      expect(after.equals(before)).toBe(true);
    });

    it('rejects while the store is broken, without quoting it, and recovers once it is fixed', async () => {
      const marker = 'deadbeef-not-a-pepper';
      const good = await subject().instance().pepper();
      await subject().corrupt(marker);
      const secrets = subject().instance();
      const error = await secrets.pepper().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect(`${error!.message} ${String(error!.cause ?? '')}`).not.toContain(marker);
      await subject().restore();
      expect((await secrets.pepper()).equals(good)).toBe(true);
    });
  });
}
