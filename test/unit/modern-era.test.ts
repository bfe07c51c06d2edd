/**
 * The 2026-07-28 path (`lambdas/protocol/modern-era.ts`) on its own, with a stub
 * invoker and a meter that records each count: which requests claim the era,
 * `server/discover` and `tools/list` with their cache hints, the meter asked only
 * for a tool call the SDK accepted (never for discover, a list, a header that
 * disagrees with the body, an unknown tool or revision), a refusal turned into 429,
 * and `subscriptions/listen` acknowledged and ended at once.
 */
import { describe, expect, it } from 'vitest';
import { LIST_CACHE_TTL_MS, MODERN_PROTOCOL_VERSION, createModernEndpoint, isModernRequest } from '../../lambdas/protocol/modern-era.ts';
import type { QuotaOutcome } from '../../lambdas/quota/quota-policy.ts';
import type { ToolInvocation, ToolInvoker } from '../../lambdas/ports/tool-invoker.ts';
import { modernBody, modernHeaders } from '../support/dual-era.ts';

const ALLOWED: QuotaOutcome = { allowed: true, headers: { 'X-Guest-Quota-Limit': '5', 'X-Guest-Quota-Remaining': '4' } };
const REFUSED: QuotaOutcome = { allowed: false, headers: { 'X-Guest-Quota-Limit': '5', 'X-Guest-Quota-Remaining': '0' }, retryAfterSeconds: 321 };
const GUIDANCE = { name: 'get_guidance', arguments: { ids: ['a'] } };

/** The endpoint over an invoker that records its calls, and a meter that answers `outcome` and counts itself. */
function setUp(outcome: QuotaOutcome = ALLOWED, invoke?: ToolInvoker['invoke']) {
  const seen = { invocations: [] as ToolInvocation[], metered: 0 };
  const invoker: ToolInvoker = {
    invoke:
      invoke ??
      (async (invocation) => {
        seen.invocations.push(invocation);
        return { content: [{ type: 'text', text: '{"results":[]}' }], structuredContent: { results: [] } };
      }),
  };
  const endpoint = createModernEndpoint();
  const meter = async () => {
    seen.metered += 1;
    return outcome;
  };
  /** A modern POST: the envelope, its mirrored headers, and any header overrides. */
  const ask = (method: string, params: Record<string, unknown> = {}, options: { headers?: Record<string, string>; version?: string; id?: number | string } = {}) => {
    const body = modernBody(method, params, options.id ?? 1, options.version);
    const headers = { ...modernHeaders(method, params.name as string | undefined, options.version), ...options.headers };
    return endpoint.answer(new Request('http://127.0.0.1:8787/mcp', { method: 'POST', headers, body: JSON.stringify(body) }), body, meter, invoker);
  };
  return { ask, seen };
}

const rpc = async (response: Response) => (await response.json()) as { id: unknown; result?: any; error?: { code: number; message: string; data?: any } };

describe('which requests claim the era', () => {
  const request = (headers: Record<string, string> = {}) => new Request('http://127.0.0.1:8787/mcp', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } });

  it('claims a request carrying the envelope, or a modern version header without it (for the SDK to refuse)', async () => {
    expect(await isModernRequest(request(), modernBody('tools/list'))).toBe(true);
    expect(await isModernRequest(request({ 'MCP-Protocol-Version': MODERN_PROTOCOL_VERSION }), { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(true);
  });

  it('leaves 2025 requests, the initialize handshake and notifications to the 2025 path', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    expect(await isModernRequest(request({ 'MCP-Protocol-Version': '2025-06-18' }), { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(false);
    expect(await isModernRequest(request(), initialize)).toBe(false);
    expect(await isModernRequest(request(), { jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(false);
  });
});

describe('discover and lists', () => {
  it('answers server/discover as JSON with this revision, the server and public cache hints, uncounted', async () => {
    const { ask, seen } = setUp();
    const response = await ask('server/discover');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const { result } = await rpc(response);
    expect(result).toMatchObject({ resultType: 'complete', supportedVersions: [MODERN_PROTOCOL_VERSION], cacheScope: 'public', ttlMs: LIST_CACHE_TTL_MS });
    expect(result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('chatctx-knowledge');
    expect(result.instructions).toContain('search_knowledge');
    expect(seen.metered).toBe(0);
  });

  it('lists the three tools with the same cache hints, uncounted', async () => {
    const { ask, seen } = setUp();
    const { result } = await rpc(await ask('tools/list'));
    expect(result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['get_guidance', 'search_knowledge', 'submit_feedback']);
    expect(result).toMatchObject({ cacheScope: 'public', ttlMs: LIST_CACHE_TTL_MS });
    expect(seen.metered).toBe(0);
  });
});

describe('tool calls', () => {
  it('counts an accepted call once, runs it with its own idempotency key, and adds the meter’s headers', async () => {
    const { ask, seen } = setUp();
    const response = await ask('tools/call', GUIDANCE);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-guest-quota-remaining')).toBe('4');
    expect((await rpc(response)).result).toMatchObject({ resultType: 'complete', structuredContent: { results: [] } });
    expect(seen.metered).toBe(1);
    expect(seen.invocations).toEqual([{ name: 'get_guidance', arguments: { ids: ['a'] }, idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
  });

  it('answers a refused call with 429, Retry-After, the meter’s headers and the request’s id, and runs nothing', async () => {
    const { ask, seen } = setUp(REFUSED);
    const response = await ask('tools/call', GUIDANCE, { id: 'call-7' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('321');
    expect(response.headers.get('x-guest-quota-remaining')).toBe('0');
    expect(await rpc(response)).toMatchObject({ id: 'call-7', error: { code: -32000, message: expect.stringMatching(/Daily quota exhausted/) } });
    expect(seen.invocations).toEqual([]);
  });

  it.each([
    ['an Mcp-Name that names another tool', { headers: { 'Mcp-Name': 'search_knowledge' } }, GUIDANCE, 400, -32020],
    ['an Mcp-Method that names another method', { headers: { 'Mcp-Method': 'tools/list' } }, GUIDANCE, 400, -32020],
    ['a revision this server does not speak', { version: '2099-01-01' }, GUIDANCE, 400, -32022],
    ['an unknown tool', {}, { name: 'drop_tables', arguments: {} }, 200, -32602],
  ])('refuses a call with %s before counting it', async (_case, options, params, status, code) => {
    const { ask, seen } = setUp();
    const response = await ask('tools/call', params, options);
    expect(response.status).toBe(status);
    expect((await rpc(response)).error?.code).toBe(code);
    expect(seen.metered).toBe(0);
    expect(seen.invocations).toEqual([]);
  });

  it('answers a call whose invoker fails with a generic tool error, counted', async () => {
    const { ask, seen } = setUp(ALLOWED, async () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7')));
    const response = await ask('tools/call', GUIDANCE);
    const { result } = await rpc(response);
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'internal' } } });
    expect(JSON.stringify(result)).not.toContain('10.0.0.7');
    expect(seen.metered).toBe(1);
  });
});

describe('subscriptions/listen', () => {
  it('acknowledges a subscription with an empty filter and ends it in the same answer', async () => {
    const { ask, seen } = setUp();
    const response = await ask('subscriptions/listen', { notifications: { toolsListChanged: true } }, { id: 'sub-1' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const messages = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' }, notifications: {} } },
      {
        jsonrpc: '2.0',
        id: 'sub-1',
        result: {
          resultType: 'complete',
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1', 'io.modelcontextprotocol/serverInfo': { name: 'chatctx-knowledge', version: expect.any(String) } },
        },
      },
    ]);
    expect(seen.metered).toBe(0);
  });

  it('leaves a subscription whose Mcp-Method header disagrees to the SDK’s 400', async () => {
    const { ask } = setUp();
    const response = await ask('subscriptions/listen', {}, { headers: { 'Mcp-Method': 'tools/list' } });
    expect(response.status).toBe(400);
    expect((await rpc(response)).error?.code).toBe(-32020);
  });
});
