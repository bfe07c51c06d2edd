/**
 * Tool calls the server refuses, as a client sees them: text Postgres cannot store
 * is an ordinary validation error, and a malformed or unknown call gets its
 * JSON-RPC error without a schema report. None of them is charged to the quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';
import { parseSse, post, toolCall } from '../support/mcp-client.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
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
