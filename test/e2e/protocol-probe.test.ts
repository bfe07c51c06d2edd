/**
 * A client of a newer MCP revision probing the local server (the real process):
 * the 2026-07-28 discover gets a real answer, every malformed probe a clean 4xx or
 * JSON-RPC error, none is counted against the guest quota, and the 2025 SDK client
 * then connects as usual.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';
import { connectClient, post } from '../support/mcp-client.ts';
import { EXPECTED_PROBE_ANSWERS, probeNewerRevision } from '../support/protocol-probe.ts';

const GUEST_LIMIT = 3;
let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none', CHATCTX_GUEST_DAILY_LIMIT: String(GUEST_LIMIT) });
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describe('a newer-revision probe on the local server', () => {
  it('answers the 2026 discover, refuses malformed probes with 400 or -32601, costs the guest nothing, and the 2025 client still connects', async () => {
    const answers = await probeNewerRevision((body, headers) => post(server.url, body, headers));
    expect(answers).toEqual(EXPECTED_PROBE_ANSWERS);

    const client = await connectClient(server.url);
    expect(client.getServerVersion()?.name).toBe('chatctx-knowledge');
    await client.close();
    const counted = await post(server.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } });
    expect(counted.status).toBe(200);
    expect(counted.headers.get('x-guest-quota-remaining')).toBe(String(GUEST_LIMIT - 1));
  });
});
