/**
 * What a caller may see and do: the collections its searches and lookups read, and
 * whether it may call `submit_feedback`. Guests see `public` and may send feedback
 * (the contract's default); a key has the scopes its owner gave it (public only and
 * feedback by default, `schema/012_collections.sql`); an OAuth access token has its
 * key's, read with the key on each resolution, so a change of scope or a revocation
 * reaches its tokens as it reaches the key.
 *
 * Collections travel as ids: names can be renamed, ids cannot, so a scope never
 * changes meaning under a key. Nothing here names the key: the scope is all the
 * tools learn about who is calling.
 */
import type { CallerScope } from '../ports/tool-invoker.ts';

/** The collection every store has, which guests see (schema/012_collections.sql gives it id 1; `records/collections.ts` names it). */
export const PUBLIC_COLLECTION_ID = 1;

/** The scope that lets a key call submit_feedback; no collection may take the name. */
export const FEEDBACK_SCOPE = 'feedback';

export type { CallerScope };

export const GUEST_SCOPE: CallerScope = Object.freeze({ collections: Object.freeze([PUBLIC_COLLECTION_ID]), feedback: true });

/** A scope from stored or sent values: ids made ascending and distinct; anything unreadable sees only public. */
export function callerScope(collections: unknown, feedback: unknown): CallerScope {
  const ids = Array.isArray(collections) ? collections.map(Number).filter((n) => Number.isSafeInteger(n) && n > 0) : [PUBLIC_COLLECTION_ID];
  return { collections: [...new Set(ids)].sort((a, b) => a - b), feedback: feedback !== false };
}

/** The scope as a short stable text: one key per distinct set of collections, for caches keyed by what a caller sees. */
export function collectionsKey(scope: CallerScope): string {
  return scope.collections.join(',');
}
