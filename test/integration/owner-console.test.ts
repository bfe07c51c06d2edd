/**
 * The admin operations the owner console calls, against a real store: the review
 * queue, rejecting candidates and revisions (kept with who, why and when, and shown
 * in the history), marking feedback reviewed, and an owner's explained search (the
 * agent's answer, why each candidate was shown or cut, and no search event).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { runAdminCommand, type AdminDeps } from '../../lambdas/admin/admin-operations.ts';
import { rejectRecords, type RejectResult } from '../../lambdas/records/record-rejection.ts';
import { QUEUE_LIMIT, reviewQueue, type QueueItem } from '../../lambdas/records/review-queue.ts';
import type { RecordHistory } from '../../lambdas/records/record-history.ts';
import { CUT_REASONS, type OwnerSearchResult } from '../../lambdas/retrieval/search-explain.ts';
import { storeFeedback, type FeedbackRow } from '../../lambdas/feedback/feedback-repository.ts';
import { DEFAULT_PROFILES } from '../../lambdas/retrieval/relevance-profiles.ts';
import { readReviewRules } from '../../lambdas/records/quality-gates.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { reviewedRecord } from '../support/records.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

let store: MemoryStore;
const deps = (): AdminDeps => ({ sql: store.sql, secrets: { pepper: async () => store.pepper } });
const run = <T>(command: Record<string, unknown>) => runAdminCommand(deps(), command) as Promise<T>;
const REASON = 'the source does not say this at all';
const count = async (table: string) => (await store.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

beforeAll(async () => {
  store = await memoryStore();
}, 300_000);

afterAll(async () => {
  await store?.sql.close();
});

describe('records.queue and records.reject', () => {
  it('lists candidates and revisions oldest first with their gate reports', async () => {
    await run({ op: 'records.import', records: [reviewedRecord('console-served')], approve: true, reviewer: 'owner' });
    await run({ op: 'records.import', records: [reviewedRecord('console-candidate')] });
    const changed = { ...reviewedRecord('console-served'), title: 'Guard the served jobs with a deadline, revised' };
    await run({ op: 'records.import', records: [changed] });
    const queue = await run<QueueItem[]>({ op: 'records.queue' });
    expect(queue.map((q) => [q.slug, q.kind])).toEqual([
      ['console-candidate', 'candidate'],
      ['console-served', 'revision'],
    ]);
    expect(queue[1]!.title).toBe('Guard the served jobs with a deadline, revised');
    for (const item of queue) {
      expect(item.gates).toMatchObject({ slug: item.slug, verdict: expect.any(String), gates: expect.any(Array) });
      expect(Date.parse(item.staged_at)).not.toBeNaN();
      expect(item.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(Date.parse(queue[0]!.staged_at)).toBeLessThanOrEqual(Date.parse(queue[1]!.staged_at));
  });

  it('refuses a short reason, an approved record with nothing waiting, a deprecated one, and unknown slugs; nothing changes', async () => {
    await run({ op: 'records.import', records: [reviewedRecord('console-plain')], approve: true, reviewer: 'owner' });
    await run({ op: 'records.import', records: [reviewedRecord('console-retired')], approve: true, reviewer: 'owner' });
    await run({ op: 'records.deprecate', ids: ['console-retired'] });
    await expect(run({ op: 'records.reject', ids: ['console-candidate'], reason: 'too short' })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(run({ op: 'records.reject', ids: ['console-candidate', 'console-plain'], reason: REASON })).rejects.toMatchObject({
      code: 'validation_error',
      message: expect.stringContaining('console-plain'),
    });
    await expect(run({ op: 'records.reject', ids: ['console-retired'], reason: REASON })).rejects.toMatchObject({
      code: 'validation_error',
      message: expect.stringContaining('console-retired is deprecated'),
    });
    await expect(run({ op: 'records.reject', ids: ['no-such-record'], reason: REASON })).rejects.toMatchObject({ code: 'not_found' });
    expect(await count('record_rejections')).toBe(0);
    expect((await run<QueueItem[]>({ op: 'records.queue' })).map((q) => q.slug)).toEqual(['console-candidate', 'console-served']);
  });

  it('rejects a candidate: it leaves the store, its text and who, why and when are kept, and its history shows them', async () => {
    const [before] = await store.sql.query<{ id: string; file: string; content_hash: string }>(
      "SELECT id::text AS id, file, content_hash FROM records WHERE slug = 'console-candidate'",
    );
    const result = await run<RejectResult>({ op: 'records.reject', ids: ['console-candidate'], reviewer: 'an owner', reason: `  ${REASON}  ` });
    expect(result).toEqual({ rejected: 1, records: [{ id: before!.id, slug: 'console-candidate', kind: 'candidate' }] });
    expect(await store.sql.query("SELECT 1 FROM records WHERE slug = 'console-candidate'")).toEqual([]);
    const [kept] = await store.sql.query<Record<string, unknown>>('SELECT record_id::text AS record_id, slug, kind, content, content_hash, rejected_by, reason FROM record_rejections');
    expect(kept).toEqual({ record_id: before!.id, slug: 'console-candidate', kind: 'candidate', content: before!.file, content_hash: before!.content_hash, rejected_by: 'an owner', reason: REASON });
    const history = await run<RecordHistory>({ op: 'records.history', id: 'console-candidate' });
    expect(history).toMatchObject({ id: before!.id, slug: 'console-candidate', status: 'rejected', versions: [], pending_revision: null, deprecation: null });
    expect(history.rejections).toEqual([{ kind: 'candidate', content_hash: before!.content_hash, rejected_by: 'an owner', reason: REASON, rejected_at: expect.any(String) }]);
    expect((await run<RecordHistory>({ op: 'records.history', id: before!.id })).slug).toBe('console-candidate');
  });

  it('rejects a revision: the approved version keeps serving, and the history lists the rejection beside the approvals', async () => {
    const search = async () => (await store.tools.search_knowledge({ query: 'console-served never answers' })).structuredContent as { results: { slug: string; title: string }[] };
    const result = await run<RejectResult>({ op: 'records.reject', ids: ['console-served'], reason: REASON });
    expect(result).toMatchObject({ rejected: 1, records: [{ slug: 'console-served', kind: 'revision' }] });
    expect(await count('record_revisions')).toBe(0);
    const shown = (await run({ op: 'records.show', id: 'console-served' })) as { content_version: number; pending_revision: unknown; record: { title: string } };
    expect(shown).toMatchObject({ content_version: 1, pending_revision: null });
    expect(shown.record.title).not.toContain('revised');
    expect((await search()).results.find((r) => r.slug === 'console-served')?.title).toBe(shown.record.title);
    const history = await run<RecordHistory>({ op: 'records.history', id: 'console-served' });
    expect(history.status).toBe('approved');
    expect(history.versions).toHaveLength(1);
    expect(history.rejections).toEqual([expect.objectContaining({ kind: 'revision', rejected_by: 'unnamed reviewer', reason: REASON })]);
    expect(await run({ op: 'records.queue' })).toEqual([]);
  });

  it('is the same through the store functions the operations call', async () => {
    await run({ op: 'records.import', records: [reviewedRecord('console-direct')] });
    const queue = await reviewQueue(store.sql, readReviewRules({}));
    expect(queue.map((q) => q.slug)).toEqual(['console-direct']);
    expect(queue.length).toBeLessThanOrEqual(QUEUE_LIMIT);
    await expect(rejectRecords(store.sql, ['console-direct'], { reviewer: 'direct', reason: REASON })).resolves.toMatchObject({ rejected: 1 });
  });

  it('shows no rejections for a record that never had one', async () => {
    expect((await run<RecordHistory>({ op: 'records.history', id: 'console-plain' })).rejections).toEqual([]);
  });
});

describe('feedback.review and feedback.list', () => {
  it('marks feedback reviewed, filters on it, keeps the first time, and refuses unknown ids', async () => {
    const first = await storeFeedback(store.sql, { category: 'helpful', source: 'search_knowledge' }, { scope: GUEST_SCOPE });
    const second = await storeFeedback(store.sql, { category: 'outdated', source: 'get_guidance', comment: 'old' }, { scope: GUEST_SCOPE });
    const list = (reviewed?: boolean) => run<FeedbackRow[]>({ op: 'feedback.list', ...(reviewed === undefined ? {} : { reviewed }) });
    // Newest first; two stored within the same clock tick (PGlite's clock is coarse) may come in either order.
    const all = await list();
    expect(all.map((f) => f.reviewed_at)).toEqual([null, null]);
    expect(all.map((f) => f.id).sort()).toEqual([first.id, second.id].sort());
    expect(Date.parse(all[0]!.created_at)).toBeGreaterThanOrEqual(Date.parse(all[1]!.created_at));
    expect(await run({ op: 'feedback.review', ids: [first.id] })).toEqual({ reviewed: 1, already_reviewed: 0 });
    const [marked] = await list(true);
    expect(marked).toMatchObject({ id: first.id, category: 'helpful', reviewed_at: expect.any(String) });
    expect((await list(false)).map((f) => f.id)).toEqual([second.id]);
    expect(await run({ op: 'feedback.review', ids: [first.id, second.id.toUpperCase()] })).toEqual({ reviewed: 1, already_reviewed: 1 });
    expect((await list(true)).find((f) => f.id === first.id)!.reviewed_at).toBe(marked!.reviewed_at);
    await expect(run({ op: 'feedback.review', ids: [randomUUID()] })).rejects.toMatchObject({ code: 'not_found' });
    await expect(run({ op: 'feedback.review', ids: ['not-a-uuid'] })).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('still has no column for a key id, an address or a user agent', async () => {
    const columns = await store.sql.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'feedback' ORDER BY ordinal_position");
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'category', 'record_ref', 'source', 'comment', 'created_at', 'reviewed_at']);
  });
});

describe('records.search', () => {
  const ARGS = { query: 'password hashing algorithm for user accounts' };

  it('answers exactly as search_knowledge does, explains every judged candidate, and writes no search event', async () => {
    const events = await count('search_events');
    const owner = await run<OwnerSearchResult>({ op: 'records.search', arguments: ARGS });
    expect(await count('search_events')).toBe(events);
    const agent = (await store.tools.search_knowledge(ARGS)).structuredContent;
    expect(owner.result).toEqual(agent);
    const { explain } = owner;
    expect(explain).toMatchObject({ mode: owner.result.retrieval.mode, total_candidates: owner.result.retrieval.total_candidates, profile: { name: 'none' } });
    const shown = explain.candidates.filter((c) => c.outcome === 'shown');
    expect(shown.map((c) => c.slug)).toEqual(owner.result.results.map((r) => r.slug));
    expect(shown[0]!.slug).toBe('hash-passwords-with-argon2id-or-bcrypt');
    const cut = explain.candidates.filter((c) => c.outcome === 'cut');
    expect(cut.length).toBeGreaterThan(0);
    for (const c of cut) expect(Object.values(CUT_REASONS)).toContain(c.reason);
    for (const c of explain.candidates) expect(c).toMatchObject({ slug: expect.any(String), title: expect.any(String), score: expect.any(Number), boosted: expect.any(Number), probability: expect.any(Number) });
  });

  it('says a candidate the profile admitted was cut by the weak tail, by max_results or by the token budget', async () => {
    // A profile that admits everything, so the later cuts have something to cut.
    const open = { ...DEFAULT_PROFILES.none, threshold: 0, minShareOfTop: 0 };
    await run({ op: 'relevance.save', profile: open });
    try {
      const query = 'pagination of large result lists';
      const few = await run<OwnerSearchResult>({ op: 'records.search', arguments: { query, max_results: 2 } });
      expect(few.result.results).toHaveLength(2);
      expect(few.explain.profile).toMatchObject({ name: 'none', threshold: 0, min_share_of_top: 0 });
      expect(few.explain.candidates.slice(2).every((c) => c.reason === CUT_REASONS.maxResults || c.reason === CUT_REASONS.versionLast)).toBe(true);
      expect(few.explain.candidates.length).toBeGreaterThan(2);
      const tight = await run<OwnerSearchResult>({ op: 'records.search', arguments: { query, max_results: 10, token_budget: 200, detail: 'standard' } });
      expect(tight.result.retrieval.truncated).toBe(true);
      expect(tight.explain.candidates.filter((c) => c.reason === CUT_REASONS.budget).length).toBeGreaterThan(0);
      await run({ op: 'relevance.save', profile: { ...open, minShareOfTop: 0.99 } });
      const tail = await run<OwnerSearchResult>({ op: 'records.search', arguments: { query } });
      expect(tail.explain.candidates.filter((c) => c.reason === CUT_REASONS.tail).length).toBeGreaterThan(0);
    } finally {
      await run({ op: 'relevance.remove', profile: 'none' });
    }
  });

  it('refuses arguments search_knowledge would refuse, and logs nothing of the question', async () => {
    await expect(run({ op: 'records.search', arguments: { query: 'x' } })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(run({ op: 'records.search', arguments: { query: 'ok question', mystery: 1 } })).rejects.toMatchObject({ code: 'validation_error' });
    const logged = store.logs.length;
    await run({ op: 'records.search', arguments: { query: 'a secret owner question about hashing passwords' } });
    expect(store.logs.slice(logged).join('\n')).not.toContain('secret owner question');
  });
});
