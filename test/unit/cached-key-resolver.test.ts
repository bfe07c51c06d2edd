/**
 * The key cache in front of the key store: how long a resolved key answers from
 * memory (until the hour changes, or `maxAgeMs` on Lambda), and that an unknown or
 * revoked key is asked about every time.
 */
import { describe, expect, it } from 'vitest';
import { CachedKeyResolver } from '../../lambdas/auth/cached-key-resolver.ts';
import type { ActiveKey } from '../../lambdas/auth/key-repository.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

/** A key store that counts lookups; `active` says which keys exist right now. */
function store(active: Map<string, ActiveKey>) {
  const lookups: string[] = [];
  return { lookups, resolve: async (key: string) => (lookups.push(key), active.get(key)) };
}

describe('CachedKeyResolver', () => {
  it('asks the store again after maxAgeMs, so a revocation takes effect within it', async () => {
    const active = new Map([['k1', { id: 'a', dailyQuota: null, scope: GUEST_SCOPE }]]);
    const inner = store(active);
    let now = Date.UTC(2026, 2, 2, 10, 0, 0);
    const cache = new CachedKeyResolver(inner, { now: () => now, maxAgeMs: 60_000 });
    expect(await cache.resolve('k1')).toEqual({ id: 'a', dailyQuota: null, scope: GUEST_SCOPE });
    now += 59_999;
    await cache.resolve('k1');
    expect(inner.lookups).toHaveLength(1);
    active.delete('k1');
    now += 1;
    expect(await cache.resolve('k1')).toBeUndefined();
    expect(await cache.resolve('k1')).toBeUndefined();
    expect(inner.lookups).toHaveLength(3);
  });

  it('without maxAgeMs keeps a key until the hour changes or forget()', async () => {
    const inner = store(new Map([['k1', { id: 'a', dailyQuota: 5, scope: GUEST_SCOPE }]]));
    let now = Date.UTC(2026, 2, 2, 10, 0, 0);
    const cache = new CachedKeyResolver(inner, { now: () => now });
    await cache.resolve('k1');
    now += 59 * 60_000;
    await cache.resolve('k1');
    expect(inner.lookups).toHaveLength(1);
    now += 60_000;
    await cache.resolve('k1');
    expect(inner.lookups).toHaveLength(2);
    cache.forget();
    await cache.resolve('k1');
    expect(inner.lookups).toHaveLength(3);
  });
});
