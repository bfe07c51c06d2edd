/**
 * Every keyed hash and derived key the service makes, from the server pepper:
 * the stored forms of what it must recognise but must not keep (API keys, guest IP
 * addresses, search queries, OAuth codes, refresh tokens and client ids), cache
 * keys, and the MACs behind access tokens and the consent form. All are
 * HMAC-SHA256, so a leaked table cannot be reversed by brute-forcing a small
 * input space (IPv4 addresses, common queries) without the pepper as well.
 *
 * Two ways of keying, both kept because stored values depend on them:
 * - API keys, guest IPs, queries and cache keys are keyed with the pepper itself,
 *   kept apart from each other by a purpose label inside the hashed message
 *   (`purposeHmac`). They came first; `api_keys.key_hash` holds such hashes, and
 *   keying them differently would need a migration that re-hashes every key,
 *   which cannot be done without the keys themselves.
 * - OAuth storage and MACs use keys derived from the pepper, one per purpose
 *   (`derivedKey`, HKDF-SHA256), so the keys themselves are separated: a MAC made
 *   for one purpose can never be presented as another's, even where the message
 *   carries no purpose label (an access token's payload, the CSRF token).
 * The pepper's fingerprint (`storage/pepper-fingerprint.ts`) is an HMAC of a fixed
 * label under the pepper, made with `keyedHash`.
 *
 * `test/unit/hashing.test.ts` pins a value of each, so none changes by accident.
 */
import { createHmac, hkdfSync } from 'node:crypto';

/** HMAC-SHA256 of `message` under `key`: the one primitive every hash below is made with. */
export function keyedHash(key: Buffer, message: string, encoding: 'hex' | 'base64url' = 'hex'): string {
  return createHmac('sha256', key).update(message, 'utf8').digest(encoding);
}

/** A key for one purpose, derived from the pepper (HKDF-SHA256), so no two purposes share a key. */
export function derivedKey(pepper: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', pepper, Buffer.alloc(0), `chatctx ${purpose}`, 32));
}

/** Domain-separated HMAC over `purpose\0value`, so a hash made for one purpose never equals another's under the same key. */
export function purposeHmac(key: Buffer, purpose: string, value: string): string {
  return keyedHash(key, `${purpose}\u0000${value}`);
}

/** HMAC-SHA256(pepper, key) as hex: exactly what `api_keys.key_hash` stores (no purpose label: see the header). */
export function hashApiKey(pepper: Buffer, key: string): string {
  return keyedHash(pepper, key);
}

export function hashClientIp(pepper: Buffer, ip: string): string {
  return purposeHmac(pepper, 'guest-ip', ip);
}

/** Lower-cased, whitespace-collapsed form used for query hashes and cache keys. */
export function normalizeQuery(query: string): string {
  return query.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

export function hashQuery(pepper: Buffer, query: string): string {
  return purposeHmac(pepper, 'query', normalizeQuery(query));
}

/** Cache key of a query embedding: model, dimensions and normalized query, keyed. */
export function hashEmbeddingCacheKey(pepper: Buffer, model: string, dimensions: number, query: string): string {
  return purposeHmac(pepper, 'embedding-cache', `${model}\u0000${dimensions}\u0000${normalizeQuery(query)}`);
}

/**
 * Key of a whole search answer kept in memory (`retrieval/search-cache.ts`): the
 * model and every argument as given. The query is not normalized here: two spellings
 * of one question may differ in what the answer says about them (a long query gets a
 * suggestion to shorten it), so only the very same input reuses an answer.
 */
export function hashSearchInput(pepper: Buffer, model: string, input: unknown): string {
  return purposeHmac(pepper, 'search-answer', `${model}\u0000${JSON.stringify(input)}`);
}

/** What an OAuth code, refresh token or registered client id is stored as: one derived key, a purpose label each. */
export function hashOAuthSecret(pepper: Buffer, purpose: 'code' | 'refresh' | 'client', value: string): string {
  return purposeHmac(derivedKey(pepper, 'oauth-storage'), purpose, value);
}

/** A MAC (base64url) under the key derived for `purpose`: access-token signatures and the consent form's CSRF token. */
export function derivedKeyMac(pepper: Buffer, purpose: 'oauth-access-token' | 'oauth-consent-csrf', message: string): string {
  return keyedHash(derivedKey(pepper, purpose), message, 'base64url');
}
