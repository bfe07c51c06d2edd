/**
 * The transport contract, end to end: the real server process, the official SDK
 * client for the protocol, raw HTTP for what a well-behaved client never sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';
import { connectClient, MCP_HEADERS, parseSse, post, toolCall } from '../support/mcp-client.ts';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_ALLOWED_ORIGINS: 'http://localhost:6274' });
  client = await connectClient(server.url);
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
});

describe('handshake', () => {
  it('reports the server name, tools-only capabilities and usage instructions', () => {
    expect(client.getServerVersion()?.name).toBe('chatctx-knowledge');
    const capabilities = client.getServerCapabilities() ?? {};
    expect(Object.keys(capabilities)).toEqual(['tools']);
    expect(client.getInstructions()).toMatch(/search_knowledge/);
    expect(client.getInstructions()).toMatch(/no_match/);
  });

  it('answers initialize as an SSE event with no Mcp-Session-Id and guest quota headers', async () => {
    const res = await post(server.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-guest-quota-limit')).toBe('250');
    expect(Number(res.headers.get('x-guest-quota-remaining'))).toBeGreaterThan(0);
    const text = await res.text();
    expect(text.startsWith('event: message\ndata: ')).toBe(true);
    expect(parseSse(text)).toMatchObject([{ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'chatctx-knowledge' } } }]);
  });

  it('answers notifications with 202 and an empty body', async () => {
    const res = await post(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('answers ping', async () => {
    await expect(client.ping()).resolves.toEqual({});
  });
});

describe('tools/list', () => {
  it('lists exactly the three tools with strict schemas and the contract annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get_guidance', 'search_knowledge', 'submit_feedback']);
    for (const tool of tools) {
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.annotations?.destructiveHint).toBe(false);
      expect(tool.annotations?.openWorldHint).toBe(false);
      expect(tool.annotations?.readOnlyHint).toBe(tool.name !== 'submit_feedback');
      expect(tool.outputSchema).toBeDefined();
    }
    const search = tools.find((t) => t.name === 'search_knowledge')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(search.inputSchema.properties).toMatchObject({
      query: { minLength: 2, maxLength: 2000 },
      technologies: { maxItems: 10, items: { maxLength: 80 } },
      versions: { maxProperties: 20 },
      max_results: { minimum: 1, maximum: 10, default: 5 },
      token_budget: { minimum: 200, maximum: 5000, default: 2500 },
    });
  });
});

describe('tools/call', () => {
  it('search_knowledge finds the starter record for a described decision with hybrid retrieval', async () => {
    const result = await client.callTool({
      name: 'search_knowledge',
      arguments: { query: 'React list rows keep the wrong state after reordering', technologies: ['React'], topic: 'implementation', max_results: 3 },
    });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as any;
    expect(out.results[0].slug).toBe('use-stable-keys-for-dynamic-react-lists');
    expect(out.results.length).toBeLessThanOrEqual(3);
    expect(out.query_summary).toBe('implementation · React');
    expect(out.retrieval).toMatchObject({
      mode: 'hybrid',
      degraded: false,
      embedding_provider: 'use-lite',
      embedding_cache: 'miss',
      technology_filter_fallback: false,
      truncated: false,
    });
    expect(out.retrieval.degraded_reason).toBeUndefined();
    // Brief detail: every field of the contract's shape, lists cut to their first two items, no rationale.
    for (const list of ['conditions', 'exceptions', 'pitfalls', 'verification_checks']) {
      expect(Array.isArray(out.results[0][list]), list).toBe(true);
      expect(out.results[0][list].length, list).toBeLessThanOrEqual(2);
    }
    expect(out.results[0].pitfalls.length).toBeGreaterThan(0);
    expect(out.results[0]).not.toHaveProperty('rationale');
    expect(out.results[0].sources[0].url).toMatch(/^https:\/\//);
    // The same JSON is in the text content for clients that ignore structured content.
    expect(JSON.parse((result.content as any)[0].text)).toEqual(out);
  });

  it('search_knowledge says no_match with suggestions when nothing in the corpus fits', async () => {
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'sourdough starter hydration for rye bread' } });
    const out = result.structuredContent as any;
    expect(out.results).toEqual([]);
    expect(out.retrieval.mode).toBe('no_match');
    expect(out.suggestions.length).toBeGreaterThan(1);
  });

  it('get_guidance returns full records and lists unknown ids as missing', async () => {
    const result = await client.callTool({
      name: 'get_guidance',
      arguments: { ids: ['use-stable-keys-for-dynamic-react-lists', 'no-such-record'] },
    });
    const out = result.structuredContent as any;
    expect(out.missing).toEqual(['no-such-record']);
    expect(out.results).toHaveLength(1);
    expect(out.results[0]).toMatchObject({ slug: 'use-stable-keys-for-dynamic-react-lists', status: 'approved', content_version: 1 });
    expect(out.results[0].pitfalls.length).toBeGreaterThan(0);
    expect(out.results[0].examples).toContain('key=');
    expect(out.results[0].sources[0].evidence_excerpt).toBeTruthy();

    const byId = await client.callTool({ name: 'get_guidance', arguments: { ids: [out.results[0].id], detail: 'brief' } });
    const brief = (byId.structuredContent as any).results[0];
    expect(brief.slug).toBe('use-stable-keys-for-dynamic-react-lists');
    expect(brief).not.toHaveProperty('status');
    expect(brief.pitfalls).toEqual(out.results[0].pitfalls.slice(0, 2));
  });

  it('submit_feedback stores the signal and returns its id', async () => {
    const result = await client.callTool({
      name: 'submit_feedback',
      arguments: { category: 'outdated', record: 'use-stable-keys-for-dynamic-react-lists', source: 'search_knowledge', comment: 'Docs moved.' },
    });
    expect(result.structuredContent).toMatchObject({ accepted: true, message: 'Anonymous feedback recorded for owner review.' });
    expect((result.structuredContent as any).id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('returns a stable validation_error result, not a protocol error, for bad arguments', async () => {
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'x' } });
    expect(result.isError).toBe(true);
    const body = result.structuredContent as any;
    expect(body.error.code).toBe('validation_error');
    expect(body.error.details.issues[0].path).toBe('query');
    expect(JSON.parse((result.content as any)[0].text)).toEqual(body);
  });

  it('rejects an unknown tool with JSON-RPC invalid params', async () => {
    const res = await post(server.url, toolCall('drop_tables', {}));
    const [message] = parseSse(await res.text()) as any[];
    expect(message.error.code).toBe(-32602);
  });
});

describe('HTTP errors', () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'ping' };

  it('406 when Accept lacks text/event-stream', async () => {
    const res = await post(server.url, init, { Accept: 'application/json' });
    expect(res.status).toBe(406);
  });

  it('415 when the body is not declared as JSON', async () => {
    const res = await post(server.url, init, { 'Content-Type': 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('413 when the body exceeds the limit', async () => {
    const res = await post(server.url, { ...init, params: { pad: 'x'.repeat(70_000) } });
    expect(res.status).toBe(413);
  });

  it('400 with -32700 for malformed JSON', async () => {
    const res = await post(server.url, '{"jsonrpc": "2.0", "id": 1,');
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe(-32700);
  });

  it('-32601 for an unknown method', async () => {
    const res = await post(server.url, { jsonrpc: '2.0', id: 7, method: 'resources/list' });
    const [message] = parseSse(await res.text()) as any[];
    expect(message).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('403 for a foreign Origin, allowed for a configured one', async () => {
    expect((await post(server.url, init, { Origin: 'https://evil.example' })).status).toBe(403);
    const ok = await post(server.url, init, { Origin: 'http://localhost:6274' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
  });

  it('403 for a foreign Host (DNS rebinding)', async () => {
    // fetch will not override Host, so speak HTTP directly.
    const { request } = await import('node:http');
    const url = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: '/mcp', method: 'POST', headers: { ...MCP_HEADERS, Host: 'rebind.example:80' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(status).toBe(403);
  });

  it('405 for DELETE (no sessions) and other methods', async () => {
    const del = await fetch(server.url, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, POST');
    expect((await fetch(server.url, { method: 'PUT' })).status).toBe(405);
  });

  it('404 off the MCP path', async () => {
    expect((await post(server.url.replace('/mcp', '/other'), init)).status).toBe(404);
  });
});

describe('GET stream', () => {
  it('opens a keep-alive SSE stream that starts with ": connected"', async () => {
    const controller = new AbortController();
    const res = await fetch(server.url, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toMatch(/^: connected\n/);
    controller.abort();
  });

  it('406 for a GET that does not accept text/event-stream', async () => {
    expect((await fetch(server.url, { headers: { Accept: 'application/json' } })).status).toBe(406);
  });
});

describe('public documentation files', () => {
  const base = () => server.url.replace(/\/mcp$/, '');

  it('serves api.json with the same tool schemas that tools/list advertises', async () => {
    const res = await fetch(`${base()}/api.json`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const api = (await res.json()) as any;
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const documented = api.tools.find((t: any) => t.name === tool.name);
      expect(documented.inputSchema).toEqual(tool.inputSchema);
      expect(documented.outputSchema).toEqual(tool.outputSchema);
    }
    expect(api.limits.queryMaxChars).toBe(2000);
    expect(api.endpoint).toBe(server.url);
  });

  it('serves the text reference, the agent policy and a client configuration for this endpoint', async () => {
    const full = await fetch(`${base()}/llms-full.txt`);
    expect(full.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await full.text();
    expect(text).toContain(server.url);
    expect(text).toContain('| `query` | string | required; 2–2000 characters |');
    expect(text).not.toContain('{{');
    expect(await (await fetch(`${base()}/llms.txt`)).text()).toContain('/llms-full.txt');
    expect(await (await fetch(`${base()}/agent-instructions.md`)).text()).toMatch(/no_match/);
    const config = (await (await fetch(`${base()}/mcp.json`)).json()) as any;
    expect(config.servers.chatctx.url).toBe(server.url);
  });

  it('serves a sitemap of the documentation pages and a robots.txt that keeps crawlers off the endpoint', async () => {
    const sitemap = await fetch(`${base()}/sitemap.xml`);
    expect(sitemap.status).toBe(200);
    expect(sitemap.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const locs = [...(await sitemap.text()).matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!);
    expect(locs).toEqual(['/llms.txt', '/llms-full.txt', '/docs.md', '/api.json', '/agent-instructions.md', '/mcp.json'].map((p) => base() + p));
    for (const loc of locs) expect((await fetch(loc)).status, loc).toBe(200);
    const robots = await fetch(`${base()}/robots.txt`);
    expect(robots.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await robots.text()).toBe(`User-agent: *\nAllow: /\nDisallow: /mcp\nSitemap: ${base()}/sitemap.xml\n`);
  });
});
