/**
 * Bearer auth for OAuth access tokens, beside API keys.
 *
 * `OAuthKeyResolver` is the `KeyResolver` the MCP endpoint is given: an API key
 * goes to the API key resolver as before; an access token is checked by its
 * signature and expiry (no database) and then resolved by the id of the API key it
 * stands for and its token family, through a cache with the same lifetime rules as
 * the key cache (`auth/cached-key-resolver.ts`). So a tool call with a token costs
 * what one with the key costs, quota is the key's, and a revoked key or a revoked
 * family (a replayed refresh token or code) stops its tokens as soon as a revoked
 * key stops itself: at once on the local server, within the key cache's age on AWS.
 *
 * A token issued for another resource (its audience is not the URL asked for) is
 * refused like any unknown token. The token is verified once per request: the MCP
 * endpoint resolves the caller once, and each 401 it gives names the protected
 * resource metadata (RFC 9728) so a connector can find the authorization server.
 */
import type { KeyResolver } from '../auth/bearer.ts';
import { CachedKeyResolver } from '../auth/cached-key-resolver.ts';
import type { ActiveKey } from '../auth/key-repository.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Sql } from '../ports/sql.ts';
import { OAuthStore } from './oauth-store.ts';
import { ACCESS_TOKEN_PREFIX, isAccessTokenShaped, verifyAccessToken } from './oauth-crypto.ts';

interface Forgetful extends KeyResolver {
  forget?(): void;
}

export class OAuthKeyResolver implements KeyResolver {
  constructor(
    /** Resolves API keys (the existing key cache). */
    private readonly apiKeys: Forgetful,
    /** Resolves an API key's id, or its id and a token family's (`"<key id> <family id>"`), to the key when active (cached like `apiKeys`). */
    private readonly keyIds: Forgetful,
    private readonly secrets: Secrets,
    private readonly now: () => number = Date.now,
  ) {}

  accepts(token: string): boolean {
    return isAccessTokenShaped(token);
  }

  async resolve(token: string, audience?: string): Promise<ActiveKey | undefined> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return this.apiKeys.resolve(token);
    const claims = verifyAccessToken(await this.secrets.pepper(), token, this.now());
    if (!claims || claims.audience !== audience) return undefined;
    return this.keyIds.resolve(claims.familyId === undefined ? claims.keyId : `${claims.keyId} ${claims.familyId}`);
  }

  /** Forgets every cached key: the next use of each key or token asks the store again. */
  forget(): void {
    this.apiKeys.forget?.();
    this.keyIds.forget?.();
  }
}

/** What the resolver needs of the key repository. */
export interface KeyLookups extends KeyResolver {
  resolveById(id: string): Promise<ActiveKey | undefined>;
}

/**
 * The resolver both runtimes use: API keys through `repository`, access tokens by
 * key id and family, each through a `CachedKeyResolver` with `maxAgeMs`.
 */
export function oauthKeyResolver(repository: KeyLookups, sql: Sql, secrets: Secrets, options: { readonly maxAgeMs?: number } = {}): OAuthKeyResolver {
  const store = new OAuthStore(sql);
  const grants: KeyResolver = {
    async resolve(grant: string) {
      const [keyId, familyId] = grant.split(' ') as [string, string | undefined];
      if (familyId !== undefined && !(await store.familyActive(familyId, keyId, new Date()))) return undefined;
      return repository.resolveById(keyId);
    },
  };
  return new OAuthKeyResolver(new CachedKeyResolver(repository, options), new CachedKeyResolver(grants, options), secrets);
}
