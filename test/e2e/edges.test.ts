/**
 * The edges an operator or a hostile client finds: text Postgres cannot store,
 * malformed or unknown tool calls (never charged to a quota), an empty bearer
 * token, trickled request bodies, piles of event streams, refusals a browser
 * client can read, a shutdown that lets answers finish, import paths that are not
 * files, and a key's last use kept to the hour.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { parseSse, post, toolCall } from '../support/mcp-client.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ CHATCTX_EMBEDDINGS: 'none', CHATCTX_REQUEST_TIMEOUT_SECONDS: '1', CHATCTX_ALLOWED_ORIGINS: 'http://app.example' });
});
afterAll(() => server?.stop());

const remaining = (response: Response) => Number(response.headers.get('x-guest-quota-remaining'));

describe('arguments Postgres cannot store', () => {
  it.each([
    ['a NUL character', 'keys\u0000and values'],
    ['an unpaired surrogate', 'keys \ud800 and values'],
  ])('answer %s with validation_error, logged as an ordinary refusal', async (_case, query) => {
    const response = await post(server.url, toolCall('search_knowledge', { query }));
    const [message] = parseSse(await response.text()) as { result: { isError: boolean; structuredContent: { error: { code: string } } } }[];
    expect(message!.result.isError).toBe(true);
    expect(message!.result.structuredContent.error.code).toBe('validation_error');
    expect(server.output()).not.toMatch(/"level":"error"/);
  });
});

describe('tool calls refused by the protocol', () => {
  it('answers params that are neither an object nor an array with 400 and -32600 (not a JSON-RPC request), charging nothing', async () => {
    const before = remaining(await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }));
    const response = await post(server.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: 'search' });
    expect(response.status).toBe(400);
    const message = (await response.json()) as { id: number; error: { code: number; message: string } };
    expect(message).toMatchObject({ id: 7, error: { code: -32600 } });
    expect(message.error.message).not.toMatch(/expected|invalid_type|\[/);
    expect(remaining(response)).toBe(before);
  });

  it.each([
    ['a name that is not a string', { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 5, arguments: {} } }],
    ['arguments that are not an object', { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_guidance', arguments: [1] } }],
    ['an unknown tool', { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'drop_tables', arguments: {} } }],
  ])('answers %s with -32602, no schema report, and charges nothing', async (_case, body) => {
    const before = remaining(await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }));
    const response = await post(server.url, body);
    const [message] = parseSse(await response.text()) as { id: number; error: { code: number; message: string } }[];
    expect(message).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(message!.error.message).not.toMatch(/expected|invalid_type|\[/);
    expect(remaining(response)).toBe(before);
  });

  it('answers other params that fail the SDK schema with -32602 too', async () => {
    const response = await post(server.url, { jsonrpc: '2.0', id: 8, method: 'initialize', params: { protocolVersion: 5 } });
    const [message] = parseSse(await response.text()) as { error: { code: number; message: string } }[];
    expect(message!.error.code).toBe(-32602);
    expect(message!.error.message).not.toMatch(/expected|invalid_type/);
  });
});

describe('authentication', () => {
  it('refuses an empty Authorization header with 401 instead of treating it as a guest', async () => {
    const response = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { Authorization: '' });
    expect(response.status).toBe(401);
  });

  it('lets a browser client on an allowed origin read a 401 (CORS headers on refusals)', async () => {
    const response = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { Authorization: 'Bearer nope', Origin: 'http://app.example' });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(response.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });
});

describe('connections', () => {
  it('answers a request body trickled past the timeout with 408, while an event stream outlives it', async () => {
    const url = new URL(server.url);
    const stream = await fetch(server.url, { headers: { Accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    const socket = connect(Number(url.port), url.hostname);
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(`POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"js`);
    await closed;
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
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

describe('shutdown', () => {
  it('lets a request in flight finish on SIGTERM, and accepts no new one', async () => {
    const dir = await makeDataDir();
    const own = await startServer({ CHATCTX_EMBEDDINGS: 'none' }, dir);
    try {
      const url = new URL(own.url);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
      const socket = connect(Number(url.port), url.hostname);
      let reply = '';
      socket.on('data', (chunk) => (reply += chunk));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopping = own.stop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await expect(fetch(own.url, { method: 'POST', body })).rejects.toThrow();
      socket.write(body.slice(10));
      await closed;
      await stopping;
      expect(reply).toMatch(/^HTTP\/1\.1 200/);
      expect(reply).toContain('"id":3');
    } finally {
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('CLI import paths', () => {
  it('refuses a FIFO named like a record file instead of waiting on it forever', async () => {
    const dir = await makeDataDir();
    try {
      const fifo = join(dir, 'records.json');
      execFileSync('mkfifo', [fifo]);
      const direct = await runCli(['--data-dir', join(dir, 'data'), 'records', 'import', fifo], { CHATCTX_EMBEDDINGS: 'none' });
      expect(direct.code).toBe(1);
      expect(direct.stderr).toMatch(/is not a regular file/);
      await mkdir(join(dir, 'only-fifo'));
      execFileSync('mkfifo', [join(dir, 'only-fifo', 'x.json')]);
      const folder = await runCli(['--data-dir', join(dir, 'data'), 'records', 'import', join(dir, 'only-fifo')], { CHATCTX_EMBEDDINGS: 'none' });
      expect(folder.code).toBe(1);
      expect(folder.stderr).toMatch(/No \.json or \.jsonl files/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a device that never ends instead of reading it into memory', async () => {
    const result = await runCli(['--data-dir', join(server.dataDir, 'unused'), 'records', 'import', '/dev/zero'], { CHATCTX_EMBEDDINGS: 'none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is not a regular file/);
  });
});

describe('privacy of key use', () => {
  it('keeps a key\u2019s last use to the hour', async () => {
    const created = await runCli(['--data-dir', server.dataDir, '--json', 'keys', 'create', '--name', 'coarse']);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    expect((await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { Authorization: `Bearer ${key}` })).status).toBe(200);
    const keys = JSON.parse((await runCli(['--data-dir', server.dataDir, '--json', 'keys', 'list'])).stdout) as { id: string; last_used_at: string }[];
    expect(keys.find((k) => k.id === id)!.last_used_at).toMatch(/T\d{2}:00:00\.000Z$/);
  });
});
