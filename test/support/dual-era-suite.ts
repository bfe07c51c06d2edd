/**
 * The behaviour both runtimes owe clients of both MCP eras, as one set of tests:
 * the runtime's test file supplies how to reach its endpoint (a URL and a fetch,
 * per client address), an API key without a quota, and its guest daily limit.
 */
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../schema/tools.ts';
import { LIST_CACHE_TTL_MS } from '../../lambdas/protocol/modern-era.ts';
import { MODERN, TOOL_CALLS, connectV1, connectV2, postModern, recording, rpcOf, type Fetch } from './dual-era.ts';

export interface DualEraTarget {
  readonly url: string;
  /** A fetch to the endpoint as seen from one client address. */
  fetchFrom(clientAddress: string): Fetch;
  /** A valid API key without a daily quota. */
  key(): string;
  readonly guestLimit: number;
}

const TOOL_NAMES = ['get_guidance', 'search_knowledge', 'submit_feedback'];

export function describeDualEra(runtime: string, target: () => DualEraTarget): void {
  describe(`both MCP eras on the ${runtime}`, () => {
    it('serves the v2 client pinned to 2026-07-28: one round trip to connect, tools listed and called', async () => {
      const t = target();
      const { fetch, sent } = recording(t.fetchFrom('203.0.113.10'));
      const client = await connectV2(t.url, 'pin', fetch, t.key());
      expect(client.getProtocolEra()).toBe('modern');
      expect(sent).toEqual([{ verb: 'POST', method: 'server/discover' }]);
      expect(client.getServerVersion()?.name).toBe('chatctx-knowledge');
      expect(client.getInstructions()).toContain('search_knowledge');
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
      for (const [name, args] of Object.entries(TOOL_CALLS)) {
        const result = await client.callTool({ name, arguments: args });
        expect(result.isError, name).toBeFalsy();
        expect(result.structuredContent, name).toBeTypeOf('object');
      }
      // No GET stream, no initialize, no ping in this era.
      expect(sent.map((s) => `${s.verb} ${s.method}`)).not.toContain('POST initialize');
      expect(sent.some((s) => s.verb === 'GET')).toBe(false);
      await client.close();
    });

    it('lets a negotiating v2 client find the 2026 era with the same single probe', async () => {
      const t = target();
      const { fetch, sent } = recording(t.fetchFrom('203.0.113.11'));
      const client = await connectV2(t.url, 'auto', fetch, t.key());
      expect(client.getProtocolEra()).toBe('modern');
      expect(sent).toEqual([{ verb: 'POST', method: 'server/discover' }]);
      await client.close();
    });

    it('keeps the 2025 handshake for the v2 client in legacy mode and for the v1 client', async () => {
      const t = target();
      const v2 = recording(t.fetchFrom('203.0.113.12'));
      const legacy = await connectV2(t.url, 'legacy', v2.fetch, t.key());
      expect(legacy.getProtocolEra()).toBe('legacy');
      expect(v2.sent.filter((s) => s.verb === 'POST').map((s) => s.method)).toEqual(['initialize', 'notifications/initialized']);
      expect((await legacy.listTools()).tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
      for (const [name, args] of Object.entries(TOOL_CALLS)) {
        expect((await legacy.callTool({ name, arguments: args })).isError, name).toBeFalsy();
      }
      await legacy.close();

      const v1 = recording(t.fetchFrom('203.0.113.13'));
      const old = await connectV1(t.url, v1.fetch, t.key());
      expect(old.getServerVersion()?.name).toBe('chatctx-knowledge');
      expect(v1.sent.filter((s) => s.verb === 'POST').map((s) => s.method)).toEqual(['initialize', 'notifications/initialized']);
      await old.ping();
      for (const [name, args] of Object.entries(TOOL_CALLS)) {
        expect((await old.callTool({ name, arguments: args })).isError, name).toBeFalsy();
      }
      await old.close();
    });

    it('answers server/discover and tools/list with resultType and public cache hints', async () => {
      const t = target();
      const fetch = t.fetchFrom('203.0.113.14');
      const discover = await postModern(t.url, fetch, 'server/discover', {}, { key: t.key() });
      expect(discover.status).toBe(200);
      // 2026 answers are plain JSON; 2025 answers stay SSE-framed (mcp-transport.test.ts).
      expect(discover.headers.get('content-type')).toContain('application/json');
      const found = (await rpcOf(discover)).result;
      expect(found).toMatchObject({ resultType: 'complete', capabilities: { tools: {} }, cacheScope: 'public', ttlMs: LIST_CACHE_TTL_MS });
      expect(found.supportedVersions).toContain(MODERN);
      expect(found._meta['io.modelcontextprotocol/serverInfo'].name).toBe('chatctx-knowledge');

      const list = (await rpcOf(await postModern(t.url, fetch, 'tools/list', {}, { key: t.key() }))).result;
      expect(list).toMatchObject({ resultType: 'complete', cacheScope: 'public', ttlMs: LIST_CACHE_TTL_MS });
      expect(list.tools).toHaveLength(3);

      const call = await postModern(t.url, fetch, 'tools/call', { name: 'get_guidance', arguments: TOOL_CALLS.get_guidance }, { key: t.key() });
      expect((await rpcOf(call)).result).toMatchObject({ resultType: 'complete', structuredContent: { missing: ['does-not-exist'] } });
      expect(call.headers.get('mcp-session-id')).toBeNull();
    });

    it('ends a 2026 subscription at once, holding no stream, and has no ping', async () => {
      const t = target();
      const fetch = t.fetchFrom('203.0.113.18');
      const listen = await postModern(t.url, fetch, 'subscriptions/listen', { notifications: { toolsListChanged: true } }, { key: t.key() });
      expect(listen.status).toBe(200);
      expect(listen.headers.get('content-type')).toContain('text/event-stream');
      const messages = (await listen.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
      expect(messages).toMatchObject([
        { method: 'notifications/subscriptions/acknowledged', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 1 }, notifications: {} } },
        { id: 1, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 1 } } },
      ]);
      const ping = await postModern(t.url, fetch, 'ping', {}, { key: t.key() });
      expect((await rpcOf(ping)).error?.code).toBe(-32601);
    });

    it('refuses mismatched headers with 400/-32020 and an unknown revision with 400/-32022, counting neither', async () => {
      const t = target();
      const fetch = t.fetchFrom('203.0.113.15');
      const call = { name: 'search_knowledge', arguments: TOOL_CALLS.search_knowledge };
      const wrongName = await postModern(t.url, fetch, 'tools/call', call, { headers: { 'Mcp-Name': 'get_guidance' } });
      expect(wrongName.status).toBe(400);
      expect((await rpcOf(wrongName)).error?.code).toBe(-32020);
      const wrongMethod = await postModern(t.url, fetch, 'tools/call', call, { headers: { 'Mcp-Method': 'tools/list' } });
      expect(wrongMethod.status).toBe(400);
      expect((await rpcOf(wrongMethod)).error?.code).toBe(-32020);
      const noName = await postModern(t.url, fetch, 'tools/call', call, { headers: { 'Mcp-Name': '' } });
      expect(noName.status).toBe(400);

      const future = await postModern(t.url, fetch, 'tools/call', call, { version: '2099-01-01' });
      expect(future.status).toBe(400);
      const refused = await rpcOf(future);
      expect(refused.error?.code).toBe(-32022);
      expect(JSON.stringify(refused.error?.data)).toContain(MODERN);

      // The guest at this address was never counted.
      const discover = await postModern(t.url, fetch, 'server/discover');
      expect(discover.headers.get('x-guest-quota-remaining')).toBe(String(t.guestLimit));
    });

    it('applies the 406, 415 and 413 rules to 2026 requests before the era is served', async () => {
      const t = target();
      const fetch = t.fetchFrom('203.0.113.19');
      const jsonOnly = await postModern(t.url, fetch, 'tools/list', {}, { key: t.key(), headers: { Accept: 'application/json' } });
      expect(jsonOnly.status).toBe(406);
      const text = await postModern(t.url, fetch, 'tools/list', {}, { key: t.key(), headers: { 'Content-Type': 'text/plain' } });
      expect(text.status).toBe(415);
      const huge = await postModern(t.url, fetch, 'tools/call', { name: 'search_knowledge', arguments: { query: 'x'.repeat(LIMITS.requestBodyMaxBytes) } }, { key: t.key() });
      expect(huge.status).toBe(413);
    });

    it('refuses a bad key with 401 before the era is even looked at', async () => {
      const t = target();
      const fetch = t.fetchFrom('203.0.113.16');
      const bad = await postModern(t.url, fetch, 'server/discover', {}, { key: 'not-a-chatctx-key' });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toContain('Bearer');
      await expect(connectV2(t.url, 'pin', fetch, 'not-a-chatctx-key')).rejects.toMatchObject({ name: expect.stringMatching(/Error/) });
    });

    it('counts only 2026 tool calls against the guest quota, then answers 429 with Retry-After', async () => {
      const t = target();
      const fetch = t.fetchFrom('203.0.113.17');
      const client = await connectV2(t.url, 'pin', fetch);
      await client.listTools();
      const discover = await postModern(t.url, fetch, 'server/discover');
      expect(discover.headers.get('x-guest-quota-limit')).toBe(String(t.guestLimit));
      expect(discover.headers.get('x-guest-quota-remaining')).toBe(String(t.guestLimit));
      for (let used = 1; used <= t.guestLimit; used++) {
        const call = await postModern(t.url, fetch, 'tools/call', { name: 'get_guidance', arguments: TOOL_CALLS.get_guidance });
        expect(call.status).toBe(200);
        expect(call.headers.get('x-guest-quota-remaining')).toBe(String(t.guestLimit - used));
      }
      const over = await postModern(t.url, fetch, 'tools/call', { name: 'get_guidance', arguments: TOOL_CALLS.get_guidance });
      expect(over.status).toBe(429);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(over.headers.get('x-guest-quota-remaining')).toBe('0');
      await expect(client.callTool({ name: 'get_guidance', arguments: TOOL_CALLS.get_guidance })).rejects.toThrow(/Daily quota exhausted/);
      // Discovery still works for a spent guest: it never counts.
      expect((await postModern(t.url, fetch, 'server/discover')).status).toBe(200);
      await client.close();
    });
  });
}
