/**
 * What one client's connections may hold: a request body trickled past the
 * request timeout is answered 408 while event streams are left open, and one
 * client holds at most 8 event streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';
import { mcpPostHead, rawConnection } from '../support/raw-http.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none', CHATCTX_REQUEST_TIMEOUT_SECONDS: '1' });
});
afterAll(() => server?.stop());

describe('connections', () => {
  it('answers a request body trickled past the timeout with 408, while an event stream outlives it', async () => {
    const stream = await fetch(server.url, { headers: { Accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    const connection = rawConnection(server.url);
    connection.write(`${mcpPostHead(server.url, 100)}{"js`);
    await connection.closed;
    expect(connection.reply()).toMatch(/^HTTP\/1\.1 408/);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain(': connected');
    expect(first.done).toBe(false);
    await reader.cancel();
  });

  it('holds at most 8 event streams for one client, and answers the 9th with 429 and Retry-After', async () => {
    const open = await Promise.all(Array.from({ length: 8 }, () => fetch(server.url, { headers: { Accept: 'text/event-stream' } })));
    expect(open.map((r) => r.status)).toEqual(Array(8).fill(200));
    const ninth = await fetch(server.url, { headers: { Accept: 'text/event-stream' } });
    expect(ninth.status).toBe(429);
    expect(Number(ninth.headers.get('retry-after'))).toBeGreaterThan(0);
    await Promise.all(open.map((r) => r.body!.cancel()));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await fetch(server.url, { headers: { Accept: 'text/event-stream' } });
    expect(again.status).toBe(200);
    await again.body!.cancel();
  });
});
