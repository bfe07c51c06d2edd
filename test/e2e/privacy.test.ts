/**
 * Privacy promises, checked on the artefacts a breach would expose: everything the
 * server printed during a session and every row of every table afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { preparedDataDir, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient, post, toolCall } from '../support/mcp-client.ts';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { join } from 'node:path';

const SECRET_QUERY = 'zebracorn7731 react list rows keep the wrong state after reordering';
const MARKER = 'zebracorn7731';
const COMMENT = 'quokka-comment-5512 the docs moved';

let dataDir: string;
let server: TestServer;
let logs = '';
let dump = '';

beforeAll(async () => {
  dataDir = await preparedDataDir();
  server = await startServer({}, dataDir);
  const client = await connectClient(server.url);
  await client.callTool({ name: 'search_knowledge', arguments: { query: SECRET_QUERY, technologies: ['React'], topic: 'implementation' } });
  await client.callTool({ name: 'search_knowledge', arguments: { query: MARKER } });
  await client.callTool({ name: 'get_guidance', arguments: { ids: [MARKER] } });
  await client.callTool({ name: 'submit_feedback', arguments: { category: 'outdated', comment: COMMENT, source: 'search_knowledge' } });
  await client.close();
  // A refused call and a malformed one must not leak either.
  await post(server.url, toolCall('search_knowledge', { query: MARKER, bogus: 1 }));
  await post(server.url, `{"query": "${MARKER}"`);
  await server.stop();
  logs = server.output();

  const sql = await PgliteSql.open(join(dataDir, 'pgdata'));
  const tables = await sql.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
  for (const { tablename } of tables) {
    const rows = await sql.query(`SELECT * FROM ${tablename}`);
    dump += `${tablename}: ${JSON.stringify(rows)}\n`;
  }
  await sql.close();
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('privacy', () => {
  it('writes no raw query text to logs', () => {
    expect(logs).toContain('"event":"search"');
    expect(logs).not.toContain(MARKER);
    expect(logs).not.toContain(COMMENT);
  });

  it('stores no raw query text in any table', () => {
    expect(dump).toContain('search_events');
    expect(dump).not.toContain(MARKER);
    expect(dump).toContain('embedding_cache: [{"cache_key"');
  });

  it('keeps a salted hash of the query plus topic, technologies, mode, count, degraded state, the ids of the records returned and the collections searched', async () => {
    const line = dump.split('\n').find((l) => l.startsWith('search_events:'))!;
    const events = JSON.parse(line.slice('search_events: '.length)) as any[];
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events[0], JSON.stringify(events[0])).toMatchObject({ topics: ['implementation'], technologies: ['React'], mode: 'hybrid', degraded: false });
    expect(events[0].query_hash).toMatch(/^[0-9a-f]{64}$/);
    // Record ids, which are not private: one per result, nothing else.
    expect(events[0].result_ids).toHaveLength(events[0].result_count);
    for (const id of events[0].result_ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(events.map((e) => e.query_hash)).size).toBe(events.length);
    // Which collections were searched (a guest: public), never which key or address asked.
    expect(events[0].collections).toEqual([1]);
    expect(Object.keys(events[0]).sort()).toEqual(
      ['collections', 'created_at', 'degraded', 'id', 'mode', 'query_hash', 'result_count', 'result_ids', 'technologies', 'topics'].sort(),
    );
  });

  it('stores feedback without key id, IP address or user agent', () => {
    const line = dump.split('\n').find((l) => l.startsWith('feedback:'))!;
    const [row] = JSON.parse(line.slice('feedback: '.length)) as Record<string, unknown>[];
    expect(Object.keys(row!).sort()).toEqual(['category', 'comment', 'created_at', 'id', 'record_ref', 'reviewed_at', 'source']);
    expect(row!.comment).toBe(COMMENT);
  });

  it('counts guests by an HMAC of their IP, never the address', () => {
    const line = dump.split('\n').find((l) => l.startsWith('quota_counters:'))!;
    const counters = JSON.parse(line.slice('quota_counters: '.length)) as { subject: string }[];
    expect(counters.length).toBeGreaterThan(0);
    for (const c of counters) expect(c.subject).toMatch(/^guest:[0-9a-f]{64}$/);
    for (const table of ['quota_counters', 'search_events', 'feedback']) {
      const rows = dump.split('\n').find((l) => l.startsWith(`${table}:`))!;
      expect(rows).not.toContain('127.0.0.1');
    }
  });
});
