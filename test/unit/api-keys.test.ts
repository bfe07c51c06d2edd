/**
 * The API key format: a new key is the prefix and 32 random bytes in URL-safe
 * base64, and only a string of that shape is looked up as a key at all; anything
 * else is refused as malformed before the store is asked.
 */
import { describe, expect, it } from 'vitest';
import { KEY_PREFIX, generateApiKey, isWellFormedApiKey } from '../../lambdas/auth/api-keys.ts';

const body = (length: number) => 'a'.repeat(length);

describe('generateApiKey', () => {
  it('makes well-formed keys of the prefix and 43 URL-safe characters, each one new', () => {
    const keys = Array.from({ length: 50 }, generateApiKey);
    for (const key of keys) {
      expect(key).toMatch(/^kb_live_[A-Za-z0-9_-]{43}$/);
      expect(isWellFormedApiKey(key)).toBe(true);
    }
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('isWellFormedApiKey', () => {
  it('accepts 43 to 256 URL-safe characters after the prefix', () => {
    expect(isWellFormedApiKey(KEY_PREFIX + body(43))).toBe(true);
    expect(isWellFormedApiKey(`${KEY_PREFIX}${body(41)}-_`)).toBe(true);
    expect(isWellFormedApiKey(KEY_PREFIX + body(256))).toBe(true);
  });

  it.each([
    ['a body one character short', KEY_PREFIX + body(42)],
    ['a body one character too long', KEY_PREFIX + body(257)],
    ['another prefix', `kb_test_${body(43)}`],
    ['no prefix', body(51)],
    ['standard base64 characters', `${KEY_PREFIX}${body(41)}+/`],
    ['padding', `${KEY_PREFIX}${body(43)}=`],
    ['a trailing newline', `${KEY_PREFIX}${body(43)}\n`],
    ['surrounding spaces', ` ${KEY_PREFIX}${body(43)} `],
    ['nothing', ''],
  ])('refuses %s', (_case, value) => {
    expect(isWellFormedApiKey(value)).toBe(false);
  });
});
