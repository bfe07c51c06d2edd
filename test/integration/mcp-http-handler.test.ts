/**
 * The MCP endpoint's transport rules (`lambdas/protocol/mcp-http-handler.ts`) in
 * process, with the parts both runtimes give it: keys over PGlite through the
 * OAuth-aware resolver, quota counters in the SQL table (mirrored in memory, as the
 * local server keeps them), and the tool handlers through the in-process invoker.
 * Each branch of the handler is asserted as a client sees it: the status, the
 * JSON-RPC code, and the headers it acts on (Allow, WWW-Authenticate, Retry-After,
 * the guest quota headers, CORS). The same rules over a real socket and the SDK
 * clients are in the end-to-end tests; these pin each branch precisely and fast.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMcpHttpHandler, type McpHttpHandler } from '../../lambdas/protocol/mcp-http-handler.ts';
import { createEndpoint } from '../../lambdas/protocol/endpoint.ts';
import type { EventStreamMode } from '../../lambdas/protocol/event-stream.ts';
import { oauthKeyResolver } from '../../lambdas/oauth/access-token-resolver.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import type { KeyResolver } from '../../lambdas/auth/bearer.ts';
import { SqlQuotaStore } from '../../lambdas/quota/sql-quota-store.ts';
import { MirroredQuotaStore } from '../../lambdas/quota/mirrored-quota-store.ts';
import { utcDay } from '../../lambdas/quota/quota-clock.ts';
import { InProcessToolInvoker } from '../../lambdas/tools/in-process-invoker.ts';
import type { QuotaStore } from '../../lambdas/ports/quota-store.ts';
import type { ToolInvoker } from '../../lambdas/ports/tool-invoker.ts';
import type { Logger } from '../../lambdas/ports/logger.ts';
import { LIMITS } from '../../schema/tools.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { modernBody, modernHeaders } from '../support/dual-era.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

const BASE = 'http://127.0.0.1:8787';
const METADATA = `${BASE}/.well-known/oauth-protected-resource/mcp`;
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
/** A minute before UTC midnight: a refused call is told to come back in 60 s. */
const NOW = new Date('2030-06-01T23:59:00Z');
const GUEST_LIMIT = 2;
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const CALL = { jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['does-not-exist'] } } };

let store: MemoryStore;
const keys = { unlimited: '', oneCall: '', revoked: '' };

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
  const repository = new KeyRepository(store.sql, { pepper: async () => store.pepper });
  keys.unlimited = (await repository.create('unlimited', null)).key;
  keys.oneCall = (await repository.create('one call a day', 1)).key;
  const revoked = await repository.create('revoked', null);
  await repository.revoke(revoked.id);
  keys.revoked = revoked.key;
}, 300_000);
afterAll(() => store?.sql.close());

interface Options {
  readonly guestDailyLimit?: number;
  readonly getStream?: EventStreamMode;
  readonly path?: string;
  readonly quota?: QuotaStore;
  readonly keys?: KeyResolver;
  readonly invoker?: ToolInvoker;
}

/** The handler as a runtime builds it, over the shared store; `lines` keeps each log event as `event fields`. */
async function handlerWith(options: Options = {}): Promise<{ handler: McpHttpHandler; lines: string[] }> {
  const secrets = { pepper: async () => store.pepper };
  const counters = new SqlQuotaStore(store.sql);
  const lines: string[] = [];
  const record = (event: string, fields?: object) => void lines.push(`${event} ${JSON.stringify(fields ?? {})}`);
  const logger: Logger = { info: record, warn: record, error: record };
  const handler = createMcpHttpHandler({
    config: {
      guestDailyLimit: options.guestDailyLimit ?? GUEST_LIMIT,
      getStream: options.getStream ?? { mode: 'close', retryMs: 5000 },
      path: options.path,
    },
    keys: options.keys ?? oauthKeyResolver(new KeyRepository(store.sql, secrets), store.sql, secrets),
    quota: options.quota ?? (await MirroredQuotaStore.open(counters, utcDay(NOW), (day) => counters.counters(day))),
    secrets,
    invoker: options.invoker ?? new InProcessToolInvoker(store.tools),
    logger,
    now: () => NOW,
  });
  return { handler, lines };
}

let addresses = 0;
/** A client address no other test uses, so guests' counters never meet. */
const freshAddress = () => `198.51.100.${++addresses}`;

interface Send {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  readonly from?: string;
  readonly signal?: AbortSignal;
  readonly path?: string;
}

function send(handler: McpHttpHandler, { method = 'POST', headers = {}, body, from = '203.0.113.1', signal, path = '/mcp' }: Send): Promise<Response> {
  const text = body === undefined || typeof body === 'string' ? body : JSON.stringify(body);
  const init: RequestInit = { method, headers: method === 'POST' ? { ...MCP_HEADERS, ...headers } : headers, body: text, signal };
  return handler(new Request(`${BASE}${path}`, init), { clientIp: from, baseUrl: BASE });
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const remaining = (response: Response) => response.headers.get('x-guest-quota-remaining');

/** The JSON-RPC messages of an answer, SSE-framed or plain JSON. */
async function messagesOf(response: Response): Promise<{ id?: unknown; result?: any; error?: { code: number; message: string } }[]> {
  const text = await response.text();
  if (!text.startsWith('event:')) return [JSON.parse(text)];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
}

/** An invoker that counts its calls before handing them to the real tools. */
function countingInvoker(): ToolInvoker & { calls: number } {
  const inner = new InProcessToolInvoker(store.tools);
  const invoker = {
    calls: 0,
    invoke: (invocation: Parameters<ToolInvoker['invoke']>[0]) => {
      invoker.calls += 1;
      return inner.invoke(invocation);
    },
  };
  return invoker;
}

/** A key of the right shape that nobody issued: resolving it needs the key store. */
const UNISSUED = `kb_live_${'x'.repeat(43)}`;

/** A port that must never be reached. */
const unreachable = () => {
  throw new Error('reached a store the request should not need');
};

describe('methods', () => {
  it.each(['PUT', 'DELETE', 'PATCH'])('refuses %s with 405 and Allow, before looking at the credentials', async (method) => {
    const { handler } = await handlerWith({ keys: { resolve: unreachable } });
    const response = await send(handler, { method, headers: bearer(UNISSUED) });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
    expect((await response.json()).error.code).toBe(-32000);
  });

  it('answers a preflight with 204 and what a browser may send, for the origin that asked', async () => {
    const { handler } = await handlerWith({ keys: { resolve: unreachable } });
    const response = await send(handler, { method: 'OPTIONS', headers: { Origin: 'http://127.0.0.1:8787', 'Access-Control-Request-Method': 'POST' } });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8787');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Mcp-Protocol-Version.*Mcp-Method.*Mcp-Name/);
  });
});

describe('the GET stream that closes (the gateway)', () => {
  it('answers with a comment and a retry hint before auth, reaching neither the key store nor the quota store', async () => {
    const never: QuotaStore = { consume: unreachable, used: unreachable };
    const { handler } = await handlerWith({ keys: { resolve: unreachable }, quota: never });
    const response = await send(handler, { method: 'GET', headers: { Accept: 'text/event-stream', ...bearer(UNISSUED) } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe(': connected\nretry: 5000\n\n');
    expect(remaining(response)).toBeNull();
  });

  it('refuses a GET that does not accept an event stream with 406', async () => {
    const { handler } = await handlerWith();
    const response = await send(handler, { method: 'GET', headers: { Accept: 'application/json' } });
    expect(response.status).toBe(406);
    expect((await response.json()).error.message).toContain('text/event-stream');
  });
});

describe('the GET stream that is held (the local server)', () => {
  const hold: EventStreamMode = { mode: 'hold', keepAliveMs: 60_000, maxStreamsPerClient: 2 };
  const open = (handler: McpHttpHandler, from: string, signal?: AbortSignal, headers: Record<string, string> = {}) =>
    send(handler, { method: 'GET', headers: { Accept: 'text/event-stream', ...headers }, from, signal });

  it('holds a guest stream open after ": connected", with the guest headers, until the client goes away', async () => {
    const { handler } = await handlerWith({ getStream: hold });
    const gone = new AbortController();
    const response = await open(handler, freshAddress(), gone.signal);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-guest-quota-limit')).toBe(String(GUEST_LIMIT));
    expect(remaining(response)).toBe(String(GUEST_LIMIT));
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(': connected\n\n');
    gone.abort();
    expect((await reader.read()).done).toBe(true);
  });

  it('refuses a revoked key with 401 before holding anything', async () => {
    const { handler } = await handlerWith({ getStream: hold });
    const response = await open(handler, freshAddress(), undefined, bearer(keys.revoked));
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/json');
  });

  it('caps the streams of one address with 429 and Retry-After, and frees a place when one ends', async () => {
    const { handler, lines } = await handlerWith({ getStream: hold });
    const address = freshAddress();
    const first = new AbortController();
    const held = [await open(handler, address, first.signal), await open(handler, address)];
    expect(held.map((response) => response.status)).toEqual([200, 200]);
    const third = await open(handler, address);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('60');
    expect(lines).toContain('stream_refused {}');
    const elsewhere = await open(handler, freshAddress());
    expect(elsewhere.status).toBe(200);

    first.abort();
    await held[1]!.body!.cancel();
    const again = await open(handler, address);
    expect(again.status).toBe(200);
    await Promise.all([again.body!.cancel(), elsewhere.body!.cancel()]);
  });

  it('holds no place for a client that went away while its key was being looked up', async () => {
    const lookups: (() => void)[] = [];
    const slow: KeyResolver = { resolve: () => new Promise((resolve) => lookups.push(() => resolve({ id: 'k', dailyQuota: null, scope: GUEST_SCOPE }))) };
    const { handler } = await handlerWith({ keys: slow, getStream: { mode: 'hold', keepAliveMs: 60_000, maxStreamsPerClient: 1 } });
    const address = freshAddress();
    const gone = new AbortController();
    const left = open(handler, address, gone.signal, bearer(UNISSUED));
    await vi.waitFor(() => expect(lookups).toHaveLength(1));
    gone.abort();
    lookups.shift()!();
    expect((await left).status).toBe(200);

    const next = open(handler, address, undefined, bearer(UNISSUED));
    await vi.waitFor(() => expect(lookups).toHaveLength(1));
    lookups.shift()!();
    const response = await next;
    expect(response.status).toBe(200);
    await response.body!.cancel();
  });
});

describe('credentials', () => {
  it('with guest access off, answers a request without credentials with 401 naming the resource metadata', async () => {
    const { handler, lines } = await handlerWith({ guestDailyLimit: 0 });
    const response = await send(handler, { body: LIST });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer realm="chatctx", resource_metadata="${METADATA}"`);
    expect((await response.json()).error).toMatchObject({ code: -32001, message: expect.stringMatching(/requires an API key/) });
    expect(lines).toContain('auth_refused {"reason":"missing"}');
    expect((await send(handler, { body: LIST, headers: bearer(keys.unlimited) })).status).toBe(200);
  });

  it.each([
    ['a token that is not an API key', 'Bearer nope', 'malformed', /not a chatctx API key/],
    ['an empty header', '', 'malformed', /not a chatctx API key/],
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`, 'malformed', /not a chatctx API key/],
    ['a well-formed key nobody issued', `Bearer ${UNISSUED}`, 'invalid', /invalid or revoked/],
  ])('refuses %s with 401 and invalid_token, even though guests are allowed', async (_case, authorization, reason, message) => {
    const { handler, lines } = await handlerWith();
    const response = await send(handler, { body: LIST, headers: { Authorization: authorization } });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer realm="chatctx", error="invalid_token", error_description="[^"]+"/);
    expect(challenge).toContain(`resource_metadata="${METADATA}"`);
    expect((await response.json()).error.message).toMatch(message);
    expect(lines).toContain(`auth_refused {"reason":"${reason}"}`);
  });

  it('refuses a revoked key, and names the metadata of the path the endpoint is served on', async () => {
    const { handler } = await handlerWith({ path: '/knowledge' });
    const response = await send(handler, { body: LIST, headers: bearer(keys.revoked), path: '/knowledge' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/knowledge"`);
  });
});

describe('what a POST must carry', () => {
  it.each(['application/json', 'text/event-stream', '*/*', ''])('refuses Accept "%s" with 406 naming both types', async (accept) => {
    const { handler } = await handlerWith();
    const response = await send(handler, { body: LIST, headers: { Accept: accept } });
    expect(response.status).toBe(406);
    expect((await response.json()).error.message).toContain('application/json, text/event-stream');
  });

  it('refuses any Content-Type but JSON with 415, and takes JSON with parameters or in capitals', async () => {
    const { handler } = await handlerWith();
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) {
      expect((await send(handler, { body: LIST, headers: { 'Content-Type': contentType } })).status, contentType).toBe(415);
    }
    for (const contentType of ['application/json; charset=utf-8', 'Application/JSON']) {
      expect((await send(handler, { body: LIST, headers: { 'Content-Type': contentType } })).status, contentType).toBe(200);
    }
  });

  it('reads a body of exactly the limit, and refuses one byte more with 413', async () => {
    const { handler } = await handlerWith();
    const padded = (size: number) => {
      const json = JSON.stringify(LIST);
      return json + ' '.repeat(size - json.length);
    };
    expect((await send(handler, { body: padded(LIMITS.requestBodyMaxBytes) })).status).toBe(200);
    const over = await send(handler, { body: padded(LIMITS.requestBodyMaxBytes + 1) });
    expect(over.status).toBe(413);
    expect((await over.json()).error.message).toContain(String(LIMITS.requestBodyMaxBytes));
  });

  it('checks in order: credentials, then Accept, then Content-Type, then size, then JSON', async () => {
    const { handler } = await handlerWith();
    const badAccept = { Accept: 'application/json' };
    const badType = { 'Content-Type': 'text/plain' };
    const huge = 'x'.repeat(LIMITS.requestBodyMaxBytes + 1);
    expect((await send(handler, { body: huge, headers: { ...bearer('nope'), ...badAccept, ...badType } })).status).toBe(401);
    expect((await send(handler, { body: huge, headers: { ...badAccept, ...badType } })).status).toBe(406);
    expect((await send(handler, { body: huge, headers: badType })).status).toBe(415);
    expect((await send(handler, { body: huge })).status).toBe(413);
    expect((await send(handler, { body: 'x' })).status).toBe(400);
  });

  it.each([
    ['JSON that does not parse', '{"jsonrpc": "2.0", "id": 1,', -32700, /Parse error/],
    ['a batch', JSON.stringify([LIST, LIST]), -32600, /batches are not supported/],
    ['an empty batch', '[]', -32600, /batches are not supported/],
    ['a number', '42', -32600, /JSON-RPC message object/],
    ['null', 'null', -32600, /JSON-RPC message object/],
  ])('refuses %s with 400, id null, and counts nothing', async (_case, body, code, message) => {
    const { handler } = await handlerWith();
    const from = freshAddress();
    const response = await send(handler, { body, from });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code, message: expect.stringMatching(message) } });
    expect(remaining(response)).toBe(String(GUEST_LIMIT));
  });
});

describe('2025-era answers', () => {
  it('frames answers as one SSE event, answers a notification with 202, and issues no session', async () => {
    const { handler } = await handlerWith();
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const response = await send(handler, { body: initialize });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const text = await response.clone().text();
    expect(text).toMatch(/^event: message\ndata: \{.*\}\n\n$/);
    expect((await messagesOf(response))[0]!.result.serverInfo.name).toBe('chatctx-knowledge');
    const notification = await send(handler, { body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe('');
  });

  it('answers params that fail the SDK schema with -32602 and no schema report, and an unknown method with -32601', async () => {
    const { handler } = await handlerWith();
    const [schema] = await messagesOf(await send(handler, { body: { jsonrpc: '2.0', id: 8, method: 'initialize', params: { protocolVersion: 5 } } }));
    expect(schema!.error!.code).toBe(-32602);
    expect(schema!.error!.message).not.toMatch(/expected|invalid_type|\[/);
    const [unknown] = await messagesOf(await send(handler, { body: { jsonrpc: '2.0', id: 9, method: 'resources/list' } }));
    expect(unknown).toMatchObject({ id: 9, error: { code: -32601 } });
  });
});

describe('quotas', () => {
  it('counts a guest’s tool calls and says what is left, then answers 429 until UTC midnight, per address', async () => {
    const { handler, lines } = await handlerWith();
    const from = freshAddress();
    expect(remaining(await send(handler, { body: LIST, from }))).toBe('2');
    expect(remaining(await send(handler, { body: CALL, from }))).toBe('1');
    expect(remaining(await send(handler, { body: CALL, from }))).toBe('0');

    const refused = await send(handler, { body: CALL, from });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('x-guest-quota-limit')).toBe('2');
    expect(remaining(refused)).toBe('0');
    expect(await refused.json()).toMatchObject({ id: 'c-1', error: { code: -32000, message: expect.stringMatching(/Daily quota exhausted/) } });
    expect(lines).toContain('quota_refused {"caller":"guest"}');

    // Lists and the handshake are never refused for quota; another address has its own count.
    const list = await send(handler, { body: LIST, from });
    expect([list.status, remaining(list)]).toEqual([200, '0']);
    expect(remaining(await send(handler, { body: CALL, from: freshAddress() }))).toBe('1');
  });

  it('asks the quota store once per answer: a count for a tool call (refused or not), a read for anything else', async () => {
    const counters = new SqlQuotaStore(store.sql);
    const asked: string[] = [];
    const quota: QuotaStore = {
      consume(subject, day, limit) {
        asked.push('consume');
        return counters.consume(subject, day, limit);
      },
      used(subject, day) {
        asked.push('used');
        return counters.used(subject, day);
      },
    };
    const { handler } = await handlerWith({ quota, guestDailyLimit: 1 });
    const from = freshAddress();
    const answers = [];
    for (const body of [LIST, CALL, CALL]) {
      asked.length = 0;
      const response = await send(handler, { body, from });
      answers.push({ status: response.status, remaining: remaining(response), asked: [...asked] });
    }
    expect(answers).toEqual([
      { status: 200, remaining: '1', asked: ['used'] },
      { status: 200, remaining: '0', asked: ['consume'] },
      { status: 429, remaining: '0', asked: ['consume'] },
    ]);
  });

  it('holds a key to its own daily quota, without guest headers, and never counts a key without one', async () => {
    const { handler, lines } = await handlerWith();
    const first = await send(handler, { body: CALL, headers: bearer(keys.oneCall) });
    expect(first.status).toBe(200);
    expect(remaining(first)).toBeNull();
    const second = await send(handler, { body: CALL, headers: bearer(keys.oneCall) });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('60');
    expect(remaining(second)).toBeNull();
    expect(lines).toContain('quota_refused {"caller":"key"}');
    for (let i = 0; i < GUEST_LIMIT + 2; i++) {
      const free = await send(handler, { body: CALL, headers: bearer(keys.unlimited) });
      expect([free.status, remaining(free)]).toEqual([200, null]);
    }
  });

});

describe('tool calls that never reach a result, or fail', () => {
  it.each([
    ['no params', undefined, /needs "name"/],
    ['a name that is not a string', { name: 5, arguments: {} }, /needs "name"/],
    ['arguments that are not an object', { name: 'get_guidance', arguments: [1] }, /needs "name"/],
    ['an unknown tool', { name: 'drop_tables', arguments: {} }, /^Unknown tool: drop_tables$/],
  ])('answers a tool call with %s with -32602, runs nothing and counts nothing', async (_case, params, message) => {
    const invoker = countingInvoker();
    const { handler } = await handlerWith({ invoker });
    const from = freshAddress();
    const response = await send(handler, { body: { jsonrpc: '2.0', id: 4, method: 'tools/call', params }, from });
    expect(response.status).toBe(200);
    expect(await messagesOf(response)).toMatchObject([{ id: 4, error: { code: -32602, message: expect.stringMatching(message) } }]);
    expect(remaining(response)).toBe(String(GUEST_LIMIT));
    expect(invoker.calls).toBe(0);
  });

  it('hands a call naming a protocol version it does not speak to the SDK’s 400, uncounted, so the client can fall back', async () => {
    const invoker = countingInvoker();
    const { handler } = await handlerWith({ invoker });
    const response = await send(handler, { body: CALL, headers: { 'MCP-Protocol-Version': '2024-01-01' }, from: freshAddress() });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/Unsupported protocol version: 2024-01-01/);
    expect(remaining(response)).toBe(String(GUEST_LIMIT));
    expect(invoker.calls).toBe(0);
    const spoken = await send(handler, { body: CALL, headers: { 'MCP-Protocol-Version': '2025-06-18' }, from: freshAddress() });
    expect([spoken.status, remaining(spoken)]).toEqual([200, '1']);
  });

  it('takes a tool call without an id as a notification: 202, nothing run, nothing counted', async () => {
    const invoker = countingInvoker();
    const { handler } = await handlerWith({ invoker });
    const { id: _id, ...notification } = CALL;
    const response = await send(handler, { body: notification, from: freshAddress() });
    expect(response.status).toBe(202);
    expect(remaining(response)).toBe(String(GUEST_LIMIT));
    expect(invoker.calls).toBe(0);
  });

  it('answers a call whose invoker fails with a generic tool error, still counted', async () => {
    const failing: ToolInvoker = { invoke: async () => Promise.reject(new Error('lambda unreachable: arn:aws:secret')) };
    const { handler } = await handlerWith({ invoker: failing });
    const response = await send(handler, { body: CALL, from: freshAddress() });
    expect([response.status, remaining(response)]).toEqual([200, '1']);
    const [message] = await messagesOf(response);
    expect(message!.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'internal' } } });
    expect(JSON.stringify(message)).not.toContain('arn:aws');
  });
});

describe('the 2026-07-28 envelope behind the same front', () => {
  const postModern = (handler: McpHttpHandler, method: string, params: Record<string, unknown>, from: string, headers: Record<string, string> = {}) =>
    send(handler, { body: modernBody(method, params), headers: { ...modernHeaders(method, params.name as string | undefined), ...headers }, from });

  it('answers discover as JSON with the guest headers, uncounted, and refuses a bad key before the era', async () => {
    const { handler } = await handlerWith();
    const from = freshAddress();
    const discover = await postModern(handler, 'server/discover', {}, from);
    expect(discover.status).toBe(200);
    expect(discover.headers.get('content-type')).toContain('application/json');
    expect((await discover.json()).result.supportedVersions).toEqual(['2026-07-28']);
    expect(remaining(discover)).toBe(String(GUEST_LIMIT));
    expect((await postModern(handler, 'server/discover', {}, from, bearer('nope'))).status).toBe(401);
  });

  it('counts its tool calls in the same store, and answers 429 with Retry-After over the limit', async () => {
    const { handler } = await handlerWith();
    const from = freshAddress();
    const call = { name: 'get_guidance', arguments: { ids: ['x'] } };
    expect(remaining(await send(handler, { body: CALL, from }))).toBe('1');
    const modern = await postModern(handler, 'tools/call', call, from);
    expect([modern.status, remaining(modern)]).toEqual([200, '0']);
    const refused = await postModern(handler, 'tools/call', call, from);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await refused.json()).toMatchObject({ id: 1, error: { code: -32000 } });
    const mismatch = await postModern(handler, 'tools/call', call, freshAddress(), { 'Mcp-Name': 'search_knowledge' });
    expect([mismatch.status, remaining(mismatch)]).toEqual([400, String(GUEST_LIMIT)]);
  });
});

describe('CORS on every answer', () => {
  const origin = { Origin: 'http://127.0.0.1:8787' };

  it.each([
    ['a 405', { method: 'PUT' }, 405],
    ['a 401', { body: LIST, headers: bearer('nope') }, 401],
    ['a 406', { body: LIST, headers: { Accept: 'application/json' } }, 406],
    ['a 400', { body: '{' }, 400],
    ['a 200', { body: LIST }, 200],
  ] as const)('lets a browser client read %s and its headers', async (_case, request, status) => {
    const { handler } = await handlerWith();
    const response = await send(handler, { ...request, headers: { ...('headers' in request ? request.headers : {}), ...origin } });
    expect(response.status).toBe(status);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin.Origin);
    expect(response.headers.get('access-control-expose-headers')).toMatch(/X-Guest-Quota-Remaining.*Retry-After.*WWW-Authenticate/);
    expect(response.headers.get('vary')).toBe('Origin');
  });

  it('adds no CORS headers for a request without Origin', async () => {
    const { handler } = await handlerWith();
    const response = await send(handler, { body: LIST, headers: bearer('nope') });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('vary')).toBeNull();
  });

  it('through the front door, lets a page this server serves on its own port read a 429 and its Retry-After', async () => {
    const { handler, lines } = await handlerWith();
    const endpoint = createEndpoint({ guard: { allowedHosts: ['127.0.0.1'], allowedOrigins: [] }, routes: { mcp: handler }, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const own = { ...MCP_HEADERS, Host: '127.0.0.1:49152', Origin: 'http://127.0.0.1:49152' };
    const from = freshAddress();
    const post = (headers: Record<string, string>) =>
      endpoint(new Request('http://127.0.0.1:49152/mcp', { method: 'POST', headers, body: JSON.stringify(CALL) }), { clientIp: from, baseUrl: BASE });
    for (let i = 0; i < GUEST_LIMIT; i++) expect((await post(own)).status).toBe(200);
    const refused = await post(own);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:49152');
    expect(refused.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect((await post({ ...own, Origin: 'http://127.0.0.1:49153' })).status).toBe(403);
    expect(lines.filter((line) => line.startsWith('quota_refused'))).toHaveLength(1);
  });
});
