/**
 * Keyed hashes for everything the service must recognise but must not keep:
 * API keys, guest IP addresses and search queries. All use HMAC-SHA256 with the
 * server pepper, so a leaked table cannot be reversed by brute-forcing a small
 * input space (IPv4 addresses, common queries) without the pepper as well.
 */
import { createHmac } from 'node:crypto';

/** HMAC-SHA256(pepper, key) as hex: exactly what `api_keys.key_hash` stores. */
export function hashApiKey(pepper: Buffer, key: string): string {
  return createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
}

/** Domain-separated HMAC so a hash made for one purpose never equals another's. */
function purposeHmac(pepper: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', pepper).update(`${purpose}\u0000${value}`, 'utf8').digest('hex');
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
