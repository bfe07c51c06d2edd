/**
 * OAuth access tokens as bearer credentials: accepted while signed by this
 * server's pepper and unexpired (time injected), resolved to the API key they
 * stand for through the id cache, refused once tampered with, expired, signed
 * with another pepper, presented to another resource, or when the key is gone;
 * API keys still go to the API key
 * resolver, and `forget` empties both caches.
 */
import { describe, expect, it } from 'vitest';
import { authenticate } from '../../lambdas/auth/bearer.ts';
import { CachedKeyResolver } from '../../lambdas/auth/cached-key-resolver.ts';
import { OAuthKeyResolver } from '../../lambdas/oauth/access-token-resolver.ts';
import { createHmac } from 'node:crypto';
import { signAccessToken, verifyAccessToken } from '../../lambdas/oauth/oauth-crypto.ts';
import { derivedKey } from '../../lambdas/privacy/hashing.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

const PEPPER = Buffer.alloc(32, 7);
const NOW = Date.parse('2026-05-01T12:00:00Z');
const AUDIENCE = 'https://mcp.example.com/mcp';
const claims = { keyId: 'key-1', audience: AUDIENCE, clientHash: 'c', expiresAt: NOW / 1000 + 3600 };

function resolverWith(active: Set<string>, clock = { now: NOW }) {
  const lookups: string[] = [];
  const byId = new CachedKeyResolver({ resolve: async (id: string) => (lookups.push(id), active.has(id) ? { id, dailyQuota: 5, scope: GUEST_SCOPE } : undefined) });
  const apiKeys = new CachedKeyResolver({ resolve: async (key: string) => (lookups.push(key), undefined) });
  const resolver = new OAuthKeyResolver(apiKeys, byId, { pepper: async () => PEPPER }, () => clock.now);
  return { resolver, lookups, clock };
}

describe('access tokens', () => {
  it('verify until they expire, by the injected clock', () => {
    const token = signAccessToken(PEPPER, claims);
    expect(verifyAccessToken(PEPPER, token, NOW + 3_599_000)).toEqual(claims);
    expect(verifyAccessToken(PEPPER, token, NOW + 3_600_000)).toBeUndefined();
  });

  it('are refused when tampered with or signed with another pepper', () => {
    const token = signAccessToken(PEPPER, claims);
    const [head, mac] = token.split('.') as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify({ k: 'key-2', a: claims.audience, c: 'c', e: claims.expiresAt })).toString('base64url');
    expect(verifyAccessToken(PEPPER, `kb_at_${forgedPayload}.${mac}`, NOW)).toBeUndefined();
    expect(verifyAccessToken(PEPPER, `${head}.${mac.slice(0, -2)}AA`, NOW)).toBeUndefined();
    expect(verifyAccessToken(Buffer.alloc(32, 8), token, NOW)).toBeUndefined();
  });

  it('authenticate as the key they stand for, looked up once per cache period', async () => {
    const { resolver, lookups } = resolverWith(new Set(['key-1']));
    const header = `Bearer ${signAccessToken(PEPPER, claims)}`;
    expect(await authenticate(header, resolver, true, AUDIENCE)).toEqual({ ok: true, caller: { kind: 'key', id: 'key-1', dailyQuota: 5, scope: GUEST_SCOPE } });
    expect(await authenticate(header, resolver, true, AUDIENCE)).toEqual({ ok: true, caller: { kind: 'key', id: 'key-1', dailyQuota: 5, scope: GUEST_SCOPE } });
    expect(lookups).toEqual(['key-1']);
  });

  it('authenticate only at the resource they were issued for, and with no lookup elsewhere', async () => {
    const { resolver, lookups } = resolverWith(new Set(['key-1']));
    const header = `Bearer ${signAccessToken(PEPPER, claims)}`;
    expect(await authenticate(header, resolver, true, 'https://other.example.com/mcp')).toEqual({ ok: false, reason: 'invalid' });
    expect(await authenticate(header, resolver, true)).toEqual({ ok: false, reason: 'invalid' });
    expect(lookups).toEqual([]);
    expect((await authenticate(header, resolver, true, AUDIENCE)).ok).toBe(true);
  });

  it('stop authenticating when expired or when their key is revoked (after forget)', async () => {
    const active = new Set(['key-1']);
    const { resolver, clock } = resolverWith(active);
    const header = `Bearer ${signAccessToken(PEPPER, claims)}`;
    expect((await authenticate(header, resolver, true, AUDIENCE)).ok).toBe(true);
    active.delete('key-1');
    resolver.forget();
    expect(await authenticate(header, resolver, true, AUDIENCE)).toEqual({ ok: false, reason: 'invalid' });
    active.add('key-1');
    clock.now = NOW + 3_600_000;
    expect(await authenticate(header, resolver, true, AUDIENCE)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('leave API keys and malformed tokens as they were', async () => {
    const { resolver, lookups } = resolverWith(new Set());
    const apiKey = `kb_live_${'a'.repeat(43)}`;
    expect(await authenticate(`Bearer ${apiKey}`, resolver, true)).toEqual({ ok: false, reason: 'invalid' });
    expect(lookups).toEqual([apiKey]);
    expect(await authenticate('Bearer kb_at_short', resolver, true)).toEqual({ ok: false, reason: 'malformed' });
    expect(await authenticate(null, resolver, true)).toEqual({ ok: true, caller: { kind: 'guest', scope: GUEST_SCOPE } });
  });

  it('carry their token family, and resolve by key and family together, so a revoked family stops them', async () => {
    const family = '11111111-2222-4333-8444-555555555555';
    const token = signAccessToken(PEPPER, { ...claims, familyId: family });
    expect(verifyAccessToken(PEPPER, token, NOW)).toEqual({ ...claims, familyId: family });
    const { resolver, lookups } = resolverWith(new Set([`key-1 ${family}`]));
    expect(await authenticate(`Bearer ${token}`, resolver, true, AUDIENCE)).toEqual({ ok: true, caller: { kind: 'key', id: `key-1 ${family}`, dailyQuota: 5, scope: GUEST_SCOPE } });
    expect(lookups).toEqual([`key-1 ${family}`]);
    // A family that is not a string is not a token this server signed the claims of.
    const odd = Buffer.from(JSON.stringify({ k: 'key-1', a: claims.audience, c: 'c', e: claims.expiresAt, f: 7 })).toString('base64url');
    const mac = createHmac('sha256', derivedKey(PEPPER, 'oauth-access-token')).update(odd).digest('base64url');
    expect(verifyAccessToken(PEPPER, `kb_at_${odd}.${mac}`, NOW)).toBeUndefined();
    const even = Buffer.from(JSON.stringify({ k: 'key-1', a: claims.audience, c: 'c', e: claims.expiresAt, f: family })).toString('base64url');
    const evenMac = createHmac('sha256', derivedKey(PEPPER, 'oauth-access-token')).update(even).digest('base64url');
    expect(verifyAccessToken(PEPPER, `kb_at_${even}.${evenMac}`, NOW)?.familyId).toBe(family);
  });
});
