/**
 * Keys as owners see and change them: scopes by name. A key stores collection ids
 * (a rename changes nothing a key sees); owners type and read names, and the word
 * `feedback` for the scope that lets a key call submit_feedback. Every keys
 * operation answers in this shape, so the CLI, the console and `--remote` show the
 * same thing.
 */
import type { Sql } from '../ports/sql.ts';
import { ConflictError, ValidationError } from '../errors/app-error.ts';
import { FEEDBACK_SCOPE, callerScope } from '../auth/caller-scope.ts';
import type { ApiKeyInfo, CreatedApiKey, KeyRepository } from '../auth/key-repository.ts';
import { PUBLIC_COLLECTION, collectionIds, collectionNames } from '../records/collections.ts';

/** A key with its scopes named: the collections it sees, and whether it may send feedback. */
export type OwnerKeyInfo = Omit<ApiKeyInfo, 'collections' | 'may_submit_feedback'> & {
  readonly collections: string[];
  readonly feedback: boolean;
};
export type OwnerCreatedKey = OwnerKeyInfo & { readonly key: string };

/** The scopes a new key gets when the owner names none: the contract's default. */
export const DEFAULT_KEY_COLLECTIONS: readonly string[] = [PUBLIC_COLLECTION];

/** Ids to names, in id order (public first). An id without a collection cannot occur (ids are never deleted); shown as `#id` should it. */
function named<T extends ApiKeyInfo>(key: T, names: Map<number, string>): Omit<T, 'collections' | 'may_submit_feedback'> & { collections: string[]; feedback: boolean } {
  const { collections, may_submit_feedback, ...rest } = key;
  const ids = [...collections].map(Number).sort((a, b) => a - b);
  return { ...rest, collections: ids.map((id) => names.get(id) ?? `#${id}`), feedback: may_submit_feedback };
}

/** Names the scopes of one key or of several, reading the collection names once. */
export async function showKeys<T extends ApiKeyInfo>(sql: Sql, keys: readonly T[]): Promise<(Omit<T, 'collections' | 'may_submit_feedback'> & { collections: string[]; feedback: boolean })[]> {
  const names = await collectionNames(sql);
  return keys.map((key) => named(key, names));
}

function refuseEmpty(collections: readonly number[]): void {
  if (collections.length === 0) {
    throw new ValidationError('A key needs at least one collection to search. To stop a key from reading anything, revoke it (`chatctx keys revoke ID`).');
  }
}

/** `keys.create`: a key scoped to these collection names (all must exist; nothing is created otherwise). */
export async function createScopedKey(
  sql: Sql,
  keys: KeyRepository,
  command: { name: string; daily_quota: number | null; collections: readonly string[]; feedback: boolean },
): Promise<OwnerCreatedKey> {
  const ids = await collectionIds(sql, command.collections);
  const collections = command.collections.map((name) => ids.get(name)!);
  refuseEmpty(collections);
  const created: CreatedApiKey = await keys.create(command.name, command.daily_quota, callerScope(collections, command.feedback));
  const [shown] = await showKeys(sql, [created]);
  return shown!;
}

/**
 * `keys.scope`: adds and removes scopes by name (`feedback`, or a collection). The
 * new scope is computed from the key as stored, so adding what it has or removing
 * what it lacks changes nothing and is not an error.
 */
export async function changeKeyScope(sql: Sql, keys: KeyRepository, command: { id: string; add: readonly string[]; remove: readonly string[] }): Promise<OwnerKeyInfo> {
  const both = command.add.filter((word) => command.remove.includes(word));
  if (both.length > 0) throw new ValidationError(`Both added and removed: ${both.join(', ')}. Name each scope once.`, { both });
  const key = await keys.get(command.id);
  if (key.revoked_at) {
    throw new ConflictError(`Key ${key.id} (${key.name}) is revoked, so its scopes no longer matter; create a new key with the scopes you want.`, { id: key.id });
  }
  const collectionsIn = (words: readonly string[]) => words.filter((word) => word !== FEEDBACK_SCOPE);
  const ids = await collectionIds(sql, [...collectionsIn(command.add), ...collectionsIn(command.remove)]);
  const removed = new Set(collectionsIn(command.remove).map((name) => ids.get(name)!));
  const collections = [...key.collections.map(Number).filter((id) => !removed.has(id)), ...collectionsIn(command.add).map((name) => ids.get(name)!)];
  refuseEmpty(collections);
  const feedback = command.add.includes(FEEDBACK_SCOPE) ? true : command.remove.includes(FEEDBACK_SCOPE) ? false : key.may_submit_feedback;
  const [shown] = await showKeys(sql, [await keys.setScope(key.id, callerScope(collections, feedback))]);
  return shown!;
}

/** `keys.scopes_available`: what a key can be scoped to (the console's checkboxes). */
export async function availableScopes(sql: Sql): Promise<{ collections: string[]; feedback: typeof FEEDBACK_SCOPE }> {
  const names = await collectionNames(sql);
  return { collections: [...names].sort(([a], [b]) => a - b).map(([, name]) => name), feedback: FEEDBACK_SCOPE };
}
