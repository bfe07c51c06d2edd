/**
 * Bad bearer tokens, refused: an empty Authorization header is a 401, never a
 * guest, and a browser client on an allowed origin can read the refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';
import { post } from '../support/mcp-client.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none', CHATCTX_ALLOWED_ORIGINS: 'http://app.example' });
});
afterAll(() => server?.stop());

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
