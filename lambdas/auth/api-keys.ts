/**
 * API key format and storage rules.
 *
 * A key is `kb_live_` followed by 32 random bytes in URL-safe base64 (43 chars).
 * Only HMAC-SHA256(pepper, key) is stored; the plaintext exists once, in the
 * response to the owner who created it.
 */
import { randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'kb_live_';
const KEY_RANDOM_BYTES = 32;

/** Any well-formed key: the prefix and at least 32 bytes of URL-safe base64. */
export const KEY_PATTERN = /^kb_live_[A-Za-z0-9_-]{43,256}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(KEY_RANDOM_BYTES).toString('base64url');
}

export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}
