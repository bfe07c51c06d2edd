/**
 * The keys admin operations with scopes, in process over a real PGlite store:
 * creating a key scoped to named collections (public and feedback by default),
 * adding and removing scopes (`feedback` by its word), what is refused without
 * changing anything, every keys result naming its collections, and the key cache
 * told of each change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand, type AdminDeps } from '../../lambdas/admin/admin-operations.ts';
import { DEFAULT_KEY_COLLECTIONS, type OwnerCreatedKey, type OwnerKeyInfo } from '../../lambdas/admin/key-scopes.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { createCollection, renameCollection } from '../../lambdas/records/collections.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';

let store: MemoryStore;
let deps: AdminDeps;
let changes = 0;

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
  deps = { sql: store.sql, secrets: { pepper: async () => store.pepper }, keysChanged: () => void changes++ };
  await createCollection(store.sql, 'internal', 'team-only guidance');
  await createCollection(store.sql, 'partners', null);
}, 120_000);
afterAll(() => store?.sql.close());

const run = <T>(command: Parameters<typeof runAdminCommand>[1]) => runAdminCommand(deps, command) as Promise<T>;
const create = (name: string, extra: object = {}) => run<OwnerCreatedKey>({ op: 'keys.create', name, daily_quota: null, ...extra });
const scope = (id: string, change: { add?: string[]; remove?: string[] }) => run<OwnerKeyInfo>({ op: 'keys.scope', id, ...change });
/** What the gateway would resolve the key to now. */
const resolved = async (key: string) => (await new KeyRepository(store.sql, deps.secrets).resolve(key))?.scope;

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => undefined, (e: unknown) => e as { code: string; message: string });
  expect(error, 'the command should have been refused').toBeDefined();
  return error!;
}

describe('keys.create', () => {
  it('gives a new key the public collection and feedback unless told otherwise', async () => {
    expect(DEFAULT_KEY_COLLECTIONS).toEqual(['public']);
    const key = await create('default agent');
    expect(key).toMatchObject({ name: 'default agent', collections: ['public'], feedback: true });
    expect(key).not.toHaveProperty('may_submit_feedback');
    expect(await resolved(key.key)).toEqual({ collections: [1], feedback: true });
  });

  it('scopes a key to the named collections, shown by name, and without feedback when asked', async () => {
    const key = await create('team agent', { collections: ['internal', 'public'], feedback: false });
    expect(key).toMatchObject({ collections: ['public', 'internal'], feedback: false });
    expect((await resolved(key.key))?.collections).toHaveLength(2);
    const listed = (await run<OwnerKeyInfo[]>({ op: 'keys.list' })).find((k) => k.id === key.id);
    expect(listed).toMatchObject({ collections: ['public', 'internal'], feedback: false });
    expect(listed).not.toHaveProperty('key');
  });

  it('refuses an unknown collection or none at all, and creates nothing', async () => {
    const before = (await run<OwnerKeyInfo[]>({ op: 'keys.list' })).length;
    const unknown = await refusal(create('typo agent', { collections: ['public', 'intranet'] }));
    expect(unknown).toMatchObject({ code: 'not_found' });
    expect(unknown.message).toContain('No collection is named "intranet"');
    expect(await refusal(create('blind agent', { collections: [] }))).toMatchObject({ code: 'validation_error' });
    expect(await run<OwnerKeyInfo[]>({ op: 'keys.list' })).toHaveLength(before);
  });
});

describe('keys.scope', () => {
  it('adds and removes collections and toggles feedback by its word, and the key resolves to the new scope at once', async () => {
    const key = await create('changing agent');
    const seen = changes;
    expect(await scope(key.id, { add: ['internal', 'partners'], remove: ['feedback'] })).toMatchObject({ collections: ['public', 'internal', 'partners'], feedback: false });
    expect(await resolved(key.key)).toMatchObject({ feedback: false });
    expect(await scope(key.id, { remove: ['public', 'partners'], add: ['feedback'] })).toMatchObject({ collections: ['internal'], feedback: true });
    expect(await resolved(key.key)).toMatchObject({ feedback: true });
    // Adding what it has and removing what it lacks change nothing.
    expect(await scope(key.id, { add: ['internal'], remove: ['public'] })).toMatchObject({ collections: ['internal'], feedback: true });
    expect(changes - seen).toBe(3);
  });

  it('refuses an unknown collection, leaving no collection, naming a scope both ways, or none, and changes nothing', async () => {
    const key = await create('steady agent', { collections: ['public', 'internal'] });
    const unknown = await refusal(scope(key.id, { add: ['intranet'], remove: ['internal'] }));
    expect(unknown).toMatchObject({ code: 'not_found' });
    expect(unknown.message).toContain('"intranet"');
    expect((await refusal(scope(key.id, { remove: ['public', 'internal'] }))).message).toContain('revoke it');
    expect((await refusal(scope(key.id, { add: ['internal'], remove: ['internal'] }))).message).toContain('Both added and removed: internal');
    expect(await refusal(scope(key.id, {}))).toMatchObject({ code: 'validation_error' });
    expect(await refusal(scope('00000000-0000-4000-8000-000000000000', { add: ['internal'] }))).toMatchObject({ code: 'not_found' });
    expect((await run<OwnerKeyInfo[]>({ op: 'keys.list' })).find((k) => k.id === key.id)).toMatchObject({ collections: ['public', 'internal'], feedback: true });
  });

  it('refuses to change a revoked key, saying to create a new one', async () => {
    const key = await create('retired agent');
    const revoked = await run<OwnerKeyInfo & { already_revoked: boolean }>({ op: 'keys.revoke', id: key.id });
    expect(revoked).toMatchObject({ collections: ['public'], feedback: true, already_revoked: false });
    const refused = await refusal(scope(key.id, { add: ['internal'] }));
    expect(refused.code).toBe('conflict');
    expect(refused.message).toContain('create a new key');
  });
});

describe('names, not ids', () => {
  it('shows a renamed collection by its new name on every key scoped to it, and lists what a key can be scoped to', async () => {
    const key = await create('partner agent', { collections: ['partners'] });
    await renameCollection(store.sql, 'partners', 'vendors');
    expect(await run<OwnerKeyInfo>({ op: 'keys.set_quota', id: key.id, daily_quota: 10 })).toMatchObject({ daily_quota: 10, collections: ['vendors'] });
    expect((await run<OwnerKeyInfo[]>({ op: 'keys.list' })).find((k) => k.id === key.id)?.collections).toEqual(['vendors']);
    expect(await run({ op: 'keys.scopes_available' })).toEqual({ collections: ['public', 'internal', 'vendors'], feedback: 'feedback' });
  });
});
