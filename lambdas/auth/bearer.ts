/**
 * Resolves the `Authorization` header to a caller.
 *
 * No header: a guest (when guest access is on). A header that is not a well-formed
 * `Bearer kb_live_…` key (an empty one included), or a key that is unknown or
 * revoked: refused with 401.
 * A bad key never falls through to guest access, so a typo is noticed at once.
 * A resolver may also take another kind of bearer token (`accepts`): OAuth access
 * tokens, which stand for an API key and are good only for the resource they were
 * issued for, the `audience` (`oauth/access-token-resolver.ts`). Each request's
 * token is resolved once, here.
 */
import { isWellFormedApiKey } from './api-keys.ts';
import { GUEST_SCOPE, type CallerScope } from './caller-scope.ts';

/** Who is calling, with what it may see (`caller-scope.ts`). */
export type Caller =
  | { readonly kind: 'guest'; readonly scope: CallerScope }
  | { readonly kind: 'key'; readonly id: string; readonly dailyQuota: number | null; readonly scope: CallerScope };

export type AuthOutcome =
  | { readonly ok: true; readonly caller: Caller }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'invalid' };

export interface KeyResolver {
  /** `audience`: the URL of the resource asked for; a token issued for another resolves to nothing. */
  resolve(key: string, audience?: string): Promise<{ id: string; dailyQuota: number | null; scope: CallerScope } | undefined>;
  /** Whether a bearer token that is not an API key is one this resolver resolves too. */
  accepts?(token: string): boolean;
}

export async function authenticate(header: string | null, keys: KeyResolver, guestEnabled: boolean, audience?: string): Promise<AuthOutcome> {
  if (header === null) return guestEnabled ? { ok: true, caller: { kind: 'guest', scope: GUEST_SCOPE } } : { ok: false, reason: 'missing' };
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match || !(isWellFormedApiKey(match[1]!) || keys.accepts?.(match[1]!))) return { ok: false, reason: 'malformed' };
  const key = await keys.resolve(match[1]!, audience);
  if (!key) return { ok: false, reason: 'invalid' };
  return { ok: true, caller: { kind: 'key', id: key.id, dailyQuota: key.dailyQuota, scope: key.scope } };
}
