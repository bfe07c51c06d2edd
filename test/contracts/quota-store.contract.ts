/**
 * What every `QuotaStore` promises (`lambdas/ports/quota-store.ts`), as one suite
 * that runs against each adapter: counting up to the limit and no further (also
 * when 50 calls race for 20 places), separate counters per subject and per day,
 * and a read that counts nothing.
 */
import { expect, it } from 'vitest';
import { describeContract, type UnderTest } from './contract.ts';
import type { QuotaStore } from '../../lambdas/ports/quota-store.ts';

export interface QuotaStoreUnderTest extends UnderTest {
  readonly store: QuotaStore;
}

export function describeQuotaStoreContract(adapter: string, open: () => Promise<QuotaStoreUnderTest>): void {
  describeContract('QuotaStore', adapter, open, (subject) => {
    const store = () => subject().store;

    it('counts calls up to the limit, then refuses, saying how many remain', async () => {
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await store().consume('key:sequential', '2025-03-14', 3));
      expect(decisions).toEqual([
        { allowed: true, remaining: 2 },
        { allowed: true, remaining: 1 },
        { allowed: true, remaining: 0 },
        { allowed: false, remaining: 0 },
      ]);
      expect(await store().used('key:sequential', '2025-03-14')).toBe(3);
    });

    it('lets exactly `limit` of 50 racing calls through, each with a distinct remaining count', async () => {
      const decisions = await Promise.all(Array.from({ length: 50 }, () => store().consume('guest:race', '2025-03-14', 20)));
      const allowed = decisions.filter((decision) => decision.allowed);
      expect(allowed).toHaveLength(20);
      expect(allowed.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(decisions.filter((decision) => !decision.allowed).every((decision) => decision.remaining === 0)).toBe(true);
      expect(await store().used('guest:race', '2025-03-14')).toBe(20);
    });

    it('keeps a counter per subject and per UTC day', async () => {
      await store().consume('guest:a', '2025-03-14', 1);
      expect(await store().consume('guest:a', '2025-03-14', 1)).toEqual({ allowed: false, remaining: 0 });
      expect(await store().consume('guest:b', '2025-03-14', 1)).toEqual({ allowed: true, remaining: 0 });
      expect(await store().consume('guest:a', '2025-03-15', 1)).toEqual({ allowed: true, remaining: 0 });
      // A subject that ends like another subject's key must not share its counter.
      expect(await store().consume('guest:a#2025-03-14', '2025-03-16', 1)).toEqual({ allowed: true, remaining: 0 });
    });

    it('refuses every call at a limit of 0 and counts none', async () => {
      expect(await store().consume('key:zero', '2025-03-14', 0)).toEqual({ allowed: false, remaining: 0 });
      expect(await store().used('key:zero', '2025-03-14')).toBe(0);
    });

    it('reads a counter without counting, and reads 0 for one never used', async () => {
      await store().consume('key:read', '2025-03-14', 10);
      expect(await store().used('key:read', '2025-03-14')).toBe(1);
      expect(await store().used('key:read', '2025-03-14')).toBe(1);
      expect(await store().used('key:never', '2025-03-14')).toBe(0);
    });
  });
}
