/**
 * The owner's collection operations through the admin entry, against a real store:
 * creating, listing and renaming collections (public fixed, `feedback` reserved,
 * names unique), importing into one, the refusal to change a stored record's
 * collection by import, moving a record (a reviewed change in its history) and what
 * that changes for a guest's search, the owner's search over every collection or
 * the named ones, and analytics per collection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand, type AdminDeps, type AnalyticsResult, type OwnerSearchAnswer } from '../../lambdas/admin/admin-operations.ts';
import { ownerSearchScope } from '../../lambdas/admin/collection-operations.ts';
import { PUBLIC_COLLECTION, type CollectionInfo } from '../../lambdas/records/collections.ts';
import type { MoveResult } from '../../lambdas/records/record-move.ts';
import type { RecordHistory, ShownRecord } from '../../lambdas/records/record-history.ts';
import type { RecordSummary } from '../../lambdas/records/record-review.ts';
import { searchKnowledge } from '../../lambdas/retrieval/search-service.ts';
import { DirectSearchEvents } from '../../lambdas/retrieval/search-events.ts';
import { GUEST_SCOPE, callerScope } from '../../lambdas/auth/caller-scope.ts';
import { searchKnowledgeInput } from '../../schema/tools.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { reviewedRecord } from '../support/records.ts';

let store: MemoryStore;
const deps = (): AdminDeps => ({ sql: store.sql, secrets: { pepper: async () => store.pepper } });
const run = <T>(command: Record<string, unknown>) => runAdminCommand(deps(), command) as Promise<T>;
const REASON = 'written for the support team only';
const INTERNAL = 'runbook-internal-deadline';
/** One of the record's own phrasings, so a search that may see it finds it. */
const QUESTION = `should ${INTERNAL} calls time out`;

const guestSearch = () =>
  searchKnowledge({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger, events: new DirectSearchEvents(store.sql, store.logger) }, searchKnowledgeInput.parse({ query: QUESTION }));
const slugsOf = (answer: { results: { slug: string }[] }) => answer.results.map((r) => r.slug);

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
  await run({ op: 'records.import', records: [reviewedRecord('plain-public-deadline')], approve: true, reviewer: 'owner' });
}, 300_000);

afterAll(async () => {
  await store?.sql.close();
});

describe('collections.create, list and rename', () => {
  it('creates a collection with a description and lists it beside public with its counts', async () => {
    const created = await run<CollectionInfo>({ op: 'collections.create', name: 'support', description: 'Runbooks for the support team' });
    expect(created).toMatchObject({ name: 'support', description: 'Runbooks for the support team', records: { approved: 0, candidate: 0, deprecated: 0 }, keys: 0 });
    const list = await run<CollectionInfo[]>({ op: 'collections.list' });
    expect(list.map((c) => c.name)).toEqual([PUBLIC_COLLECTION, 'support']);
    expect(list[0]!.records.approved).toBe(1);
  });

  it('refuses a second collection of a name, the reserved name, a name owners could not type back, and renaming public', async () => {
    await expect(run({ op: 'collections.create', name: 'support' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(run({ op: 'collections.create', name: 'feedback' })).rejects.toMatchObject({ code: 'validation_error', message: expect.stringMatching(/reserved/) });
    await expect(run({ op: 'collections.create', name: 'Support Team' })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(run({ op: 'collections.rename', from: 'public', to: 'everyone' })).rejects.toMatchObject({ code: 'validation_error', message: expect.stringMatching(/public/) });
    await expect(run({ op: 'collections.rename', from: 'support', to: 'public' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(run({ op: 'collections.rename', from: 'nowhere', to: 'elsewhere' })).rejects.toMatchObject({ code: 'not_found' });
    expect((await run<CollectionInfo[]>({ op: 'collections.list' })).map((c) => c.name)).toEqual(['public', 'support']);
  });

  it('renames a collection; what it holds follows', async () => {
    await run({ op: 'collections.create', name: 'drafts-team' });
    const renamed = await run<CollectionInfo>({ op: 'collections.rename', from: 'drafts-team', to: 'staff' });
    expect(renamed.name).toBe('staff');
    expect((await run<CollectionInfo[]>({ op: 'collections.list' })).map((c) => c.name)).toEqual(['public', 'support', 'staff']);
  });
});

describe('records.import into a collection', () => {
  it('puts new records in the named collection; records list shows and filters by it', async () => {
    await run({ op: 'records.import', records: [reviewedRecord(INTERNAL)], approve: true, reviewer: 'owner', collection: 'support' });
    const all = await run<RecordSummary[]>({ op: 'records.list' });
    expect(all.map((r) => [r.slug, r.collection])).toEqual([
      ['plain-public-deadline', 'public'],
      [INTERNAL, 'support'],
    ]);
    expect((await run<RecordSummary[]>({ op: 'records.list', collection: 'support' })).map((r) => r.slug)).toEqual([INTERNAL]);
    expect((await run<ShownRecord>({ op: 'records.show', id: INTERNAL })).collection).toBe('support');
    await expect(run({ op: 'records.list', collection: 'nowhere' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(run({ op: 'records.import', records: [reviewedRecord('lost-record')], collection: 'nowhere' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses to change a stored record\'s collection by import, pointing at records move; nothing changes', async () => {
    const changed = { ...reviewedRecord(INTERNAL), title: 'Guard the support jobs with a deadline, revised' };
    await expect(run({ op: 'records.import', records: [changed], collection: 'public' })).rejects.toMatchObject({ message: expect.stringMatching(/records move/) });
    const shown = await run<ShownRecord>({ op: 'records.show', id: INTERNAL });
    expect(shown).toMatchObject({ collection: 'support', pending_revision: null });
  });

  it('keeps a guest\'s search out of the collection, and the owner\'s search in every one unless told otherwise', async () => {
    expect(slugsOf(await guestSearch())).not.toContain(INTERNAL);
    const owner = await run<OwnerSearchAnswer>({ op: 'records.search', arguments: { query: QUESTION } });
    expect(owner.collections).toEqual({ names: ['public', 'support', 'staff'], every_collection: true });
    expect(owner.result.results.map((r) => r.slug)).toContain(INTERNAL);
    const publicOnly = await run<OwnerSearchAnswer>({ op: 'records.search', arguments: { query: QUESTION }, collections: ['public'] });
    expect(publicOnly.collections).toEqual({ names: ['public'], every_collection: false });
    expect(publicOnly.result.results.map((r) => r.slug)).not.toContain(INTERNAL);
    await expect(run({ op: 'records.search', arguments: { query: QUESTION }, collections: ['nowhere'] })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('scopes the owner\'s search like a key scoped to the same collections', async () => {
    const { scope } = await ownerSearchScope(store.sql, ['support']);
    const [support] = await store.sql.query<{ id: number }>("SELECT id FROM collections WHERE name = 'support'");
    expect(scope).toEqual(callerScope([support!.id], true));
  });
});

describe('records.move', () => {
  it('refuses a short reason, an unknown collection, a record already there and an unknown record', async () => {
    await expect(run({ op: 'records.move', record: INTERNAL, to: 'public', reviewer: 'owner', reason: 'because' })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(run({ op: 'records.move', record: INTERNAL, to: 'nowhere', reviewer: 'owner', reason: REASON })).rejects.toMatchObject({ code: 'not_found' });
    await expect(run({ op: 'records.move', record: INTERNAL, to: 'support', reviewer: 'owner', reason: REASON })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(run({ op: 'records.move', record: 'no-such-record', to: 'public', reviewer: 'owner', reason: REASON })).rejects.toMatchObject({ code: 'not_found' });
    expect((await run<RecordHistory>({ op: 'records.history', id: INTERNAL })).moves).toEqual([]);
  });

  it('moves a record to public: the history shows who, why, from and to, and a guest\'s search now finds it', async () => {
    const moved = await run<MoveResult>({ op: 'records.move', record: INTERNAL, to: 'public', reviewer: 'ana', reason: 'cleared for customers by legal review' });
    expect(moved).toMatchObject({ slug: INTERNAL, from: 'support', to: 'public' });
    const history = await run<RecordHistory>({ op: 'records.history', id: INTERNAL });
    expect(history.collection).toBe('public');
    expect(history.moves).toEqual([{ from: 'support', to: 'public', reviewer: 'ana', reason: 'cleared for customers by legal review', moved_at: moved.moved_at }]);
    expect((await run<ShownRecord>({ op: 'records.show', id: INTERNAL })).moves).toHaveLength(1);
    expect(slugsOf(await guestSearch())).toContain(INTERNAL);
  });

  it('moves it back: the guest no longer finds it, and both moves are in the history, oldest first', async () => {
    await run({ op: 'records.move', record: INTERNAL, to: 'support', reviewer: 'ana', reason: 'the customer version is a separate record now' });
    expect(slugsOf(await guestSearch())).not.toContain(INTERNAL);
    const history = await run<RecordHistory>({ op: 'records.history', id: INTERNAL });
    expect(history.moves.map((m) => [m.from, m.to])).toEqual([
      ['support', 'public'],
      ['public', 'support'],
    ]);
  });
});

describe('analytics.report per collection', () => {
  it('counts only the searches whose collection set holds the collection, and feedback about its records; names, never keys', async () => {
    const [support] = await store.sql.query<{ id: number }>("SELECT id FROM collections WHERE name = 'support'");
    const scoped = callerScope([1, support!.id], true);
    const events = new DirectSearchEvents(store.sql, store.logger);
    const search = (scope: typeof GUEST_SCOPE) =>
      searchKnowledge({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger, events }, searchKnowledgeInput.parse({ query: QUESTION }), scope);
    await search(scoped);
    await search(scoped);
    const before = await run<AnalyticsResult>({ op: 'analytics.report', days: 2 });
    await search(GUEST_SCOPE);
    const ref = (await run<ShownRecord>({ op: 'records.show', id: INTERNAL })).id;
    await store.sql.query("INSERT INTO feedback (id, category, record_ref, source) VALUES (gen_random_uuid(), 'helpful', $1, 'agent')", [ref]);
    await store.sql.query("INSERT INTO feedback (id, category, record_ref, source) VALUES (gen_random_uuid(), 'outdated', 'plain-public-deadline', 'agent')");

    const all = await run<AnalyticsResult>({ op: 'analytics.report', days: 2 });
    expect(all.collection).toBeNull();
    expect(all.searches).toBe(before.searches + 1);
    const counts = Object.fromEntries(all.per_collection.map((c) => [c.collection, c.searches]));
    expect(counts.support).toBe(2);
    expect(counts.public).toBe(all.searches);

    const report = await run<AnalyticsResult>({ op: 'analytics.report', days: 2, collection: 'support' });
    expect(report.collection).toBe('support');
    expect(report.searches).toBe(2);
    expect(report.feedback.total).toBe(1);
    expect(report.feedback.by_record.map((r) => r.record)).toEqual([INTERNAL]);
    expect(report.top_records.map((r) => r.slug)).toEqual([INTERNAL]);
    expect(report.per_collection.map((c) => [c.collection, c.searches])).toEqual([
      ['public', 2],
      ['support', 2],
    ]);
    expect(JSON.stringify(report)).not.toMatch(/key_id|api_key/);
    await expect(run({ op: 'analytics.report', collection: 'nowhere' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
