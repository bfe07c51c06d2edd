/**
 * No leaks, local runtime: two real `chatctx serve` processes, driven by the official
 * MCP SDK client over HTTP. Store A holds the starter corpus and an `internal`
 * collection (test/support/collection-leaks.ts): a handful of records written for it,
 * and an internal copy of every starter record, whose passages sit beside each public
 * one; store B holds the starter corpus alone.
 * Both are copies of a data directory after a server's first start (the starter
 * corpus embedded from its shipped vectors); A gets its internal records as an
 * owner's import would, and the server embeds them at start with the bundled
 * encoder, so every search runs hybrid. Both read their nearest passages exactly
 * (`answerExactlyUpTo`): on the index a guest walks the public collection's own graph
 * on A and the whole (public) graph on B, and two HNSW graphs can differ by a near
 * tie, which would be no leak; the index paths are tested in vector-plan.test.ts.
 *
 * A guest and a key scoped to public only must get from store A exactly what store B
 * answers: results, order, content, total_candidates, mode and no_match suggestions;
 * the answer cache must never hand one caller what another's collections found;
 * get_guidance and submit_feedback must treat an internal record like one that does
 * not exist; and search events keep the collection set, never the key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { preparedDataDir, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import {
  INTERNAL,
  QUESTIONS,
  addInternalCollection,
  addInternalTwins,
  answerExactlyUpTo,
  comparable,
  internalMentions,
  scopedKeys,
  slugsOf,
  withIdAs,
  type ScopedKeys,
} from '../support/collection-leaks.ts';
import { DataDirLock, storePath } from '../../lambdas/local/data-dir.ts';
import { STARTER_CORPUS_DIR, openLocalStore } from '../../lambdas/local/local-store.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';

type Caller = 'guest' | 'publicOnly' | 'internal';

let dirA: string;
let dirB: string;
let serverA: TestServer | undefined;
let serverB: TestServer | undefined;
let internalId: number;
let keys: ScopedKeys;
/** Internal record ids by slug. */
let internalIds: Map<string, string>;
const clientsA = {} as Record<Caller, Client>;
let clientB: Client;
/** Searches made on store A, by the collection set the caller sees. */
const searchesA = { public: 0, internal: 0 };

/**
 * Adds to a copy of a data directory after its first start (the starter corpus loaded) what an
 * owner's import would: the internal collection and two scoped keys. Store B is such a copy as it is.
 */
async function addInternal(dir: string): Promise<void> {
  const lock = (await DataDirLock.tryAcquire(dir, 'import'))!;
  const store = await openLocalStore(lock);
  try {
    await answerExactlyUpTo(store.sql, 3_000);
    internalId = await addInternalCollection(store.sql);
    await addInternalTwins(store.sql, await readRecordFiles(STARTER_CORPUS_DIR));
    keys = await scopedKeys(store.sql, store.secrets, internalId);
    const rows = await store.sql.query<{ id: string; slug: string }>('SELECT id::text AS id, slug FROM records WHERE collection_id = $1', [internalId]);
    internalIds = new Map(rows.map((r) => [r.slug, r.id]));
  } finally {
    await store.close();
    await lock.release();
  }
}

/** Store B as a copy of the first-started directory is, but answering exactly as A does. */
async function exactAnswers(dir: string): Promise<void> {
  const lock = (await DataDirLock.tryAcquire(dir, 'import'))!;
  const store = await openLocalStore(lock);
  try {
    await answerExactlyUpTo(store.sql, 3_000);
  } finally {
    await store.close();
    await lock.release();
  }
}

beforeAll(async () => {
  [dirA, dirB] = await Promise.all([preparedDataDir(), preparedDataDir()]);
  await addInternal(dirA);
  await exactAnswers(dirB);
  [serverA, serverB] = await Promise.all([startServer({}, dirA), startServer({}, dirB)]);
  clientsA.guest = await connectClient(serverA.url);
  clientsA.publicOnly = await connectClient(serverA.url, keys.publicOnly.key);
  clientsA.internal = await connectClient(serverA.url, keys.internal.key);
  clientB = await connectClient(serverB.url);
}, 600_000);

afterAll(async () => {
  for (const client of [...Object.values(clientsA), clientB]) await client?.close();
  await serverA?.stop();
  await serverB?.stop();
  await Promise.all([dirA, dirB].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  return result.isError ? { isError: true, ...(result.structuredContent as object) } : result.structuredContent;
}

async function searchA(caller: Caller, args: Record<string, unknown>): Promise<any> {
  searchesA[caller === 'internal' ? 'internal' : 'public'] += 1;
  return call(clientsA[caller], 'search_knowledge', args);
}

describe('search on the local runtime', () => {
  it('answers a guest and a public-only key from store A exactly as store B answers, and the internal key with its records', async () => {
    const orders: Caller[][] = [
      ['guest', 'publicOnly', 'internal'],
      ['publicOnly', 'internal', 'guest'],
      ['internal', 'guest', 'publicOnly'],
    ];
    let internalAnswered = 0;
    for (const [index, question] of QUESTIONS.entries()) {
      const expected = comparable(await call(clientB, 'search_knowledge', question.args));
      // Callers take turns asking first, so a kept answer is tried in every order.
      const answers = {} as Record<Caller, any>;
      for (const caller of orders[index % orders.length]!) answers[caller] = await searchA(caller, question.args);
      for (const caller of ['guest', 'publicOnly'] as const) {
        expect(comparable(answers[caller]), `${question.name}: ${caller}`).toEqual(expected);
        expect(internalMentions(answers[caller]), `${question.name}: ${caller}`).toEqual([]);
        expect(answers[caller].retrieval.degraded, question.name).toBe(false);
      }
      if (question.internal && slugsOf(answers.internal).includes(question.internal)) internalAnswered += 1;
      // The comparison can fail: what the internal records change (results, counts, coverage) shows in the internal key's answer.
      if (question.internal) expect(comparable(answers.internal), question.name).not.toEqual(expected);
    }
    // Every question about an internal topic is answered for the key that sees internal.
    expect(internalAnswered).toBe(QUESTIONS.filter((q) => q.internal).length);
  });

  it('runs hybrid, and answers a question only internal guidance covers with no_match and the same suggestions as a store without it', async () => {
    const question = QUESTIONS.find((q) => q.name.includes('no_match'))!;
    const guest = await searchA('guest', question.args);
    const inB = await call(clientB, 'search_knowledge', question.args);
    expect(guest.retrieval.mode).toBe('no_match');
    expect(guest.suggestions.length).toBeGreaterThan(1);
    expect(guest.suggestions).toEqual(inB.suggestions);
    const internal = await searchA('internal', question.args);
    expect(internal.retrieval.mode).toBe('hybrid');
    expect(slugsOf(internal)).toContain(INTERNAL.buckets);
  });

  it('never serves a guest the answer a wider key was given for the same question, in either order', async () => {
    const first = { query: 'how many retries with backoff for a call to another team service' };
    const wide = await searchA('internal', first);
    expect(slugsOf(wide)).toContain(INTERNAL.retry);
    const guest = await searchA('guest', first);
    expect(comparable(guest)).toEqual(comparable(await call(clientB, 'search_knowledge', first)));
    expect(internalMentions(guest)).toEqual([]);

    const second = { query: 'which PostgreSQL cluster may hold customer email addresses' };
    const guestFirst = await searchA('guest', second);
    expect(comparable(guestFirst)).toEqual(comparable(await call(clientB, 'search_knowledge', second)));
    const wideAfter = await searchA('internal', second);
    expect(slugsOf(wideAfter)).toContain(INTERNAL.pii);
  });
});

describe('get_guidance and submit_feedback on the local runtime', () => {
  const UNKNOWN = 'no-such-record-anywhere';

  it('lists an internal slug or id in `missing` for a guest and a public-only key, exactly like an unknown one', async () => {
    const unknown = await call(clientsA.guest, 'get_guidance', { ids: [UNKNOWN] });
    expect(unknown).toEqual({ results: [], missing: [UNKNOWN] });
    const piiId = internalIds.get(INTERNAL.pii)!;
    for (const caller of ['guest', 'publicOnly'] as const) {
      for (const identifier of [INTERNAL.pii, piiId, INTERNAL.oldRetry]) {
        const answer = await call(clientsA[caller], 'get_guidance', { ids: [identifier] });
        expect(withIdAs(answer, identifier, UNKNOWN), `${caller} ${identifier}`).toEqual(unknown);
        // Store B has never heard of it: the same answer.
        expect(answer).toEqual(await call(clientB, 'get_guidance', { ids: [identifier] }));
      }
    }
  });

  it('gives the internal key the record, and the deprecated one its successor', async () => {
    const answer = await call(clientsA.internal, 'get_guidance', { ids: [INTERNAL.pii, internalIds.get(INTERNAL.buckets)!, INTERNAL.oldRetry] });
    expect(slugsOf(answer)).toEqual([INTERNAL.pii, INTERNAL.buckets]);
    expect(answer.missing).toEqual([INTERNAL.oldRetry]);
    expect(answer.superseded_by).toEqual({ [INTERNAL.oldRetry]: INTERNAL.retry });
  });

  it('refuses feedback naming an internal record from a guest as `unknown_record`, exactly like a made-up slug', async () => {
    const unknown = await call(clientsA.guest, 'submit_feedback', { category: 'helpful', record: UNKNOWN });
    expect(unknown).toMatchObject({ isError: true, error: { code: 'validation_error', details: { issues: [{ path: 'record', code: 'unknown_record' }] } } });
    for (const identifier of [INTERNAL.pii, internalIds.get(INTERNAL.pii)!]) {
      const refused = await call(clientsA.guest, 'submit_feedback', { category: 'helpful', record: identifier, comment: 'useful' });
      expect(withIdAs(refused, identifier, UNKNOWN)).toEqual(unknown);
    }
    // The key that sees the record may give feedback on it.
    expect(await call(clientsA.internal, 'submit_feedback', { category: 'helpful', record: INTERNAL.pii })).toMatchObject({ accepted: true });
  });
});

describe('what store A kept', () => {
  it('records each search with the collection set the caller saw and nothing of the key, and only the allowed feedback', async () => {
    // The server writes its buffered events when it stops.
    for (const client of Object.values(clientsA)) await client.close();
    await serverA!.stop();
    serverA = undefined;
    const sql = await PgliteSql.open(storePath(dirA));
    try {
      const sets = await sql.query<{ collections: number[]; n: number }>(
        'SELECT collections, count(*)::int AS n FROM search_events GROUP BY collections ORDER BY collections',
      );
      expect(sets).toEqual([
        { collections: [1], n: searchesA.public },
        { collections: [1, internalId], n: searchesA.internal },
      ]);
      const rows = await sql.query<{ row: string }>('SELECT row_to_json(e)::text AS row FROM search_events e');
      const keyRows = await sql.query<{ id: string; key_hash: string }>('SELECT id::text AS id, key_hash FROM api_keys');
      const secrets = [...keyRows.flatMap((k) => [k.id, k.key_hash]), keys.publicOnly.key, keys.internal.key];
      expect(rows.filter((r) => secrets.some((s) => r.row.includes(s)))).toEqual([]);
      const feedback = await sql.query<{ record_ref: string | null }>('SELECT record_ref::text AS record_ref FROM feedback');
      expect(feedback).toEqual([{ record_ref: INTERNAL.pii }]);
    } finally {
      await sql.close();
    }
  });
});
