/**
 * The per-address throttle of the OAuth endpoints over a `QuotaStore` (here a
 * faithful in-memory one): the hourly count resets with the hour, the daily count
 * holds until UTC midnight, `Retry-After` says which, addresses are counted apart
 * and under their keyed hash, and an IPv6 client is one client per /64.
 */
import { describe, expect, it } from 'vitest';
import { AddressThrottle, countedAddress } from '../../lambdas/quota/address-throttle.ts';
import type { QuotaStore } from '../../lambdas/ports/quota-store.ts';

class MemoryQuota implements QuotaStore {
  readonly counts = new Map<string, number>();
  async consume(subject: string, day: string, limit: number) {
    const key = `${subject}#${day}`;
    const used = this.counts.get(key) ?? 0;
    if (used >= limit) return { allowed: false, remaining: 0 };
    this.counts.set(key, used + 1);
    return { allowed: true, remaining: limit - used - 1 };
  }
  async used(subject: string, day: string) {
    return this.counts.get(`${subject}#${day}`) ?? 0;
  }
}

const RULE = { name: 'register', perHour: 2, perDay: 3 };

function throttleAt(iso: string) {
  const clock = { now: new Date(iso) };
  const store = new MemoryQuota();
  const throttle = new AddressThrottle(store, { pepper: async () => Buffer.alloc(32, 1) }, () => clock.now);
  return { throttle, store, clock };
}

describe('address throttle', () => {
  it('allows the hourly count, then refuses until the next hour, then the daily count until midnight', async () => {
    const { throttle, clock } = throttleAt('2026-12-01T10:59:30Z');
    expect(await throttle.take(RULE, '203.0.113.5')).toBeUndefined();
    expect(await throttle.take(RULE, '203.0.113.5')).toBeUndefined();
    expect(await throttle.take(RULE, '203.0.113.5')).toEqual({ retryAfterSeconds: 30 });
    clock.now = new Date('2026-12-01T11:00:00Z');
    expect(await throttle.take(RULE, '203.0.113.5')).toBeUndefined();
    expect(await throttle.take(RULE, '203.0.113.5')).toEqual({ retryAfterSeconds: 13 * 3600 });
    clock.now = new Date('2026-12-02T00:00:01Z');
    expect(await throttle.take(RULE, '203.0.113.5')).toBeUndefined();
  });

  it('counts addresses apart, under a keyed hash rather than the address', async () => {
    const { throttle, store } = throttleAt('2026-12-01T10:00:00Z');
    await throttle.take(RULE, '203.0.113.5');
    await throttle.take(RULE, '203.0.113.5');
    expect(await throttle.take(RULE, '203.0.113.6')).toBeUndefined();
    expect([...store.counts.keys()].join(' ')).not.toContain('203.0.113');
  });

  it('blocks on what was counted, without counting', async () => {
    const { throttle } = throttleAt('2026-12-01T10:00:00Z');
    const rule = { name: 'consent', perHour: 2, perDay: 10 };
    expect(await throttle.blocked(rule, '203.0.113.7')).toBeUndefined();
    await throttle.count(rule, '203.0.113.7');
    expect(await throttle.blocked(rule, '203.0.113.7')).toBeUndefined();
    await throttle.count(rule, '203.0.113.7');
    expect(await throttle.blocked(rule, '203.0.113.7')).toEqual({ retryAfterSeconds: 3600 });
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped one as its IPv4 address', async () => {
    expect(countedAddress('2001:db8:1:2:aaaa::1')).toBe(countedAddress('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(countedAddress('2001:db8:1:2::1')).not.toBe(countedAddress('2001:db8:1:3::1'));
    expect(countedAddress('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(countedAddress('unknown')).toBe('unknown');
    const { throttle } = throttleAt('2026-12-01T10:00:00Z');
    await throttle.take(RULE, '2001:db8:1:2::1');
    await throttle.take(RULE, '2001:db8:1:2::2');
    expect(await throttle.take(RULE, '2001:db8:1:2:abcd::9')).toBeDefined();
  });
});
