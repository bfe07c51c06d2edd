/**
 * OAuth access tokens and fresh random secrets. Access tokens are checked without
 * the database; their claims say which API key they stand for, whom they were
 * issued to, for which resource and until when. Their signature, like the stored
 * form of every other OAuth secret (`hashOAuthSecret`), is made in
 * `privacy/hashing.ts`, with a key derived from the pepper for this one purpose.
 *
 * An access token is `kb_at_` + base64url(JSON claims) + `.` + base64url(HMAC-SHA256).
 * It does not decide policy (lifetimes, audiences): `oauth-routes.ts` does.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { derivedKeyMac } from '../privacy/hashing.ts';

export const ACCESS_TOKEN_PREFIX = 'kb_at_';

/** A token's shape, checked before any cryptography; the length bound keeps a huge header cheap to refuse. */
const ACCESS_TOKEN_PATTERN = /^kb_at_[A-Za-z0-9_-]{16,1500}\.[A-Za-z0-9_-]{43}$/;

export interface AccessTokenClaims {
  /** The API key the token stands for. */
  readonly keyId: string;
  /** The MCP resource URL the token was issued for. */
  readonly audience: string;
  /** Keyed hash of the client id it was issued to. */
  readonly clientHash: string;
  /** Expiry, epoch seconds. */
  readonly expiresAt: number;
  /** The token family it was issued in (absent from tokens issued before families existed). */
  readonly familyId?: string;
}

export function isAccessTokenShaped(token: string): boolean {
  return ACCESS_TOKEN_PATTERN.test(token);
}

export function signAccessToken(pepper: Buffer, claims: AccessTokenClaims): string {
  const payload = Buffer.from(JSON.stringify({ k: claims.keyId, a: claims.audience, c: claims.clientHash, e: claims.expiresAt, f: claims.familyId })).toString('base64url');
  return `${ACCESS_TOKEN_PREFIX}${payload}.${signature(pepper, payload)}`;
}

/** The claims of a token this server signed that has not expired at `nowMs`, else undefined. */
export function verifyAccessToken(pepper: Buffer, token: string, nowMs: number): AccessTokenClaims | undefined {
  if (!isAccessTokenShaped(token)) return undefined;
  const [payload, mac] = token.slice(ACCESS_TOKEN_PREFIX.length).split('.') as [string, string];
  const expected = Buffer.from(signature(pepper, payload), 'base64url');
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let raw: { k?: unknown; a?: unknown; c?: unknown; e?: unknown; f?: unknown };
  try {
    raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw.k !== 'string' || typeof raw.a !== 'string' || typeof raw.c !== 'string' || typeof raw.e !== 'number') return undefined;
  if (raw.e * 1000 <= nowMs) return undefined;
  if (raw.f !== undefined && typeof raw.f !== 'string') return undefined;
  return { keyId: raw.k, audience: raw.a, clientHash: raw.c, expiresAt: raw.e, ...(raw.f === undefined ? {} : { familyId: raw.f }) };
}

function signature(pepper: Buffer, payload: string): string {
  return derivedKeyMac(pepper, 'oauth-access-token', payload);
}

/** A fresh secret: a recognisable prefix and 32 random bytes. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}
