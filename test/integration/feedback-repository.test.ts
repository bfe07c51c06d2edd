/**
 * Storing feedback as the submit_feedback function's database role would, with that
 * role's own grants (`ROLE_GRANTS.chatctx_feedback`: INSERT on feedback and four
 * columns of records, nothing else). A repeated delivery of
 * one call stores one row; a record that is not approved stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { feedbackIdFor, storeFeedback } from '../../lambdas/feedback/feedback-repository.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';
import { ROLE_GRANTS } from '../../lambdas/storage/database-roles.ts';

const ROLE = 'chatctx_feedback';
let store: MemoryStore;

/** Runs `work` as a role with exactly the feedback function's grants. */
const asFeedbackRole = <T>(work: (sql: Sql) => Promise<T>) =>
  store.sql.transaction(async (tx) => {
    await tx.query(`SET LOCAL ROLE ${ROLE}`);
    return work(tx);
  });

const count = async () => Number((await store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM feedback'))[0]!.n);

beforeAll(async () => {
  store = await memoryStore();
  await store.sql.query(`CREATE ROLE ${ROLE}`);
  for (const grant of ROLE_GRANTS[ROLE]) await store.sql.query(grant);
}, 300_000);

afterAll(async () => {
  await store?.sql.close();
});

describe('storeFeedback', () => {
  it('stores one row for a call delivered three times, and answers each delivery with its id', async () => {
    const before = await count();
    const key = randomUUID();
    const input = { category: 'outdated', source: 'get_guidance', record: 'hash-passwords-with-argon2id-or-bcrypt' } as const;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await asFeedbackRole((sql) => storeFeedback(sql, input, { idempotencyKey: key, scope: GUEST_SCOPE })));
    expect(new Set(answers.map((a) => a.id))).toEqual(new Set([feedbackIdFor(key)]));
    expect(await count()).toBe(before + 1);
  });

  it('stores every call without a key', async () => {
    const before = await count();
    const input = { category: 'helpful', source: 'search_knowledge' } as const;
    await asFeedbackRole((sql) => storeFeedback(sql, input, { scope: GUEST_SCOPE }));
    await asFeedbackRole((sql) => storeFeedback(sql, input, { scope: GUEST_SCOPE }));
    expect(await count()).toBe(before + 2);
  });

  it('refuses a record that is not approved and stores nothing', async () => {
    const before = await count();
    await expect(
      asFeedbackRole((sql) => storeFeedback(sql, { category: 'incorrect', source: 'get_guidance', record: 'no-such-record' }, { idempotencyKey: randomUUID(), scope: GUEST_SCOPE })),
    ).rejects.toMatchObject({ code: 'validation_error' });
    expect(await count()).toBe(before);
  });

  it('derives a well-formed UUID that differs per key', () => {
    const a = feedbackIdFor('a');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(feedbackIdFor('b')).not.toBe(a);
  });
});
