/**
 * Every keyed hash the service stores or hands out, pinned to the value it has
 * always had for a fixed pepper: API key hashes, guest-IP, query, cache and answer
 * keys, OAuth code, refresh-token and client hashes, access-token signatures, the
 * consent form's CSRF token and the pepper's fingerprint. A change to how any of
 * them is made would orphan stored rows (every API key and OAuth grant would stop
 * working) or refuse tokens already issued, so it fails here first. The values
 * were computed before these hashes were brought into one module, and two of them
 * were checked against an independent HMAC and HKDF implementation.
 */
import { describe, expect, it } from 'vitest';
import {
  derivedKey,
  hashApiKey,
  hashClientIp,
  hashEmbeddingCacheKey,
  hashOAuthSecret,
  hashQuery,
  hashSearchInput,
} from '../../lambdas/privacy/hashing.ts';
import { signAccessToken, verifyAccessToken } from '../../lambdas/oauth/oauth-crypto.ts';
import { CSRF_COOKIE, csrfValid } from '../../lambdas/oauth/consent-page.ts';
import { pepperFingerprint } from '../../lambdas/storage/pepper-fingerprint.ts';

const PEPPER = Buffer.from('chatctx test pepper, not a secret', 'utf8');

describe('keyed hashes keep their values', () => {
  it('API keys, guest addresses, queries, embedding cache keys and search answers (keyed with the pepper)', () => {
    expect(hashApiKey(PEPPER, 'kb_live_pinnedExampleKey0000000000000000000000000')).toBe(
      '6dc906ca4983c86fa5cee2554b5f01fbb7244d91586cbfed91b8d8a5964ccf3d',
    );
    expect(hashClientIp(PEPPER, '203.0.113.7')).toBe('de1eef3377d35c23f91cc9038665f397460fe25c59fe0974fc8842b3edb25d07');
    expect(hashClientIp(PEPPER, '2001:db8::1')).toBe('b7a633ec1be67dcd56a52bfd1cc11d57059f7346f0f93c6f533d69ad1031a06e');
    expect(hashQuery(PEPPER, '  React  List KEYS ')).toBe('c95daafc19418126cdb93734e37f090f2109b171839964f014f5b00f4be3d8b2');
    expect(hashEmbeddingCacheKey(PEPPER, 'use-lite', 512, 'React list keys')).toBe(
      'a0d12cda048c8d995f318e3775ac11a8c1927d40838794ec59998aa4a7c915df',
    );
    expect(hashSearchInput(PEPPER, 'use-lite', { query: 'React list keys', max_results: 3 })).toBe(
      '9b47dc4feb5a2d3530164a54c4894c3c35ad7459f11104fc614b65b612a7ac3c',
    );
  });

  it('OAuth codes, refresh tokens and clients (keyed with a key derived from the pepper)', () => {
    expect(derivedKey(PEPPER, 'oauth-storage').toString('hex')).toBe('a06511ad2b7212e8c2bb3680b14a4d9752863e80558a2928509bde17f6fb70cb');
    expect(hashOAuthSecret(PEPPER, 'code', 'kb_code_example')).toBe('e1504e9e126f52a8fbb9af2eeb61fd64a418d24377effbf8377b79317a614ae2');
    expect(hashOAuthSecret(PEPPER, 'refresh', 'kb_rt_example')).toBe('d95d0f3da36e3d9b8aaf092cdf151c619943603df03af98a0f1e0019a40677f9');
    expect(hashOAuthSecret(PEPPER, 'client', 'https://client.example.com/metadata.json')).toBe(
      '82959d2113e34146233f5441df7344ad43209765753f2b17d5c4fb1de88ade3f',
    );
  });

  it('access tokens: the same token for the same claims, and one issued earlier still verifies', () => {
    const claims = { keyId: '0f8fad5b-d9cb-469f-a165-70867728950e', audience: 'https://mcp.example.com/mcp', clientHash: 'c0ffee', expiresAt: 1_800_000_000, familyId: 'fam-1' };
    const issued =
      'kb_at_eyJrIjoiMGY4ZmFkNWItZDljYi00NjlmLWExNjUtNzA4Njc3Mjg5NTBlIiwiYSI6Imh0dHBzOi8vbWNwLmV4YW1wbGUuY29tL21jcCIsImMiOiJjMGZmZWUiLCJlIjoxODAwMDAwMDAwLCJmIjoiZmFtLTEifQ.QurcQ3PFlnb9b__N4FxqcCQ11zKJsAogiyLBHXKLte0';
    expect(signAccessToken(PEPPER, claims)).toBe(issued);
    expect(verifyAccessToken(PEPPER, issued, 1_700_000_000_000)).toEqual(claims);
    const withoutFamily = { keyId: 'key-1', audience: 'https://mcp.example.com/mcp', clientHash: 'c0ffee', expiresAt: 1_800_000_000 };
    expect(signAccessToken(PEPPER, withoutFamily)).toBe(
      'kb_at_eyJrIjoia2V5LTEiLCJhIjoiaHR0cHM6Ly9tY3AuZXhhbXBsZS5jb20vbWNwIiwiYyI6ImMwZmZlZSIsImUiOjE4MDAwMDAwMDB9.PITw1bnFpjU1xeB_HF9D11P2rSwpsNK60Q8nmply1Aw',
    );
  });

  it('the consent form\'s CSRF token for a given cookie and expiry', () => {
    const cookie = `${CSRF_COOKIE}=cookie-value`;
    const now = 1_700_000_000_000;
    expect(csrfValid(PEPPER, cookie, '1800000000.a7i9OAeJYp66d57pNZMw9x51nHccI9Hspa96nzRjpMs', now)).toBe(true);
    expect(csrfValid(PEPPER, cookie, '1800000000.a7i9OAeJYp66d57pNZMw9x51nHccI9Hspa96nzRjpMA', now)).toBe(false);
  });

  it('the pepper\'s fingerprint', () => {
    expect(pepperFingerprint(PEPPER)).toBe('d17203f1a538873a0dfa41e138219e0f04e57a2d4c1e70e76a816ecdd627a43b');
  });
});
