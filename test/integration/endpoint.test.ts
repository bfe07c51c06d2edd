/**
 * The front door both runtimes call (`lambdas/protocol/endpoint.ts`), in process,
 * with the real MCP handler and the real OAuth endpoints over PGlite: Host is
 * refused before any route or the store is reached, documentation answers while the
 * store is still opening, Origin binds `/mcp` only, an access token counts only at
 * the resource it was issued for, and one catch answers every route's failure with
 * 503 and `Retry-After` for a resuming store or a logged 500 otherwise, shaped the
 * way that route's clients read errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, type Endpoint, type EndpointRoutes } from '../../lambdas/protocol/endpoint.ts';
import { createMcpHttpHandler } from '../../lambdas/protocol/mcp-http-handler.ts';
import { createOAuthRoutes } from '../../lambdas/oauth/oauth-routes.ts';
import { oauthKeyResolver } from '../../lambdas/oauth/access-token-resolver.ts';
import { signAccessToken } from '../../lambdas/oauth/oauth-crypto.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { SqlQuotaStore } from '../../lambdas/quota/sql-quota-store.ts';
import { InProcessToolInvoker } from '../../lambdas/tools/in-process-invoker.ts';
import { UnavailableError } from '../../lambdas/errors/app-error.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import type { Logger } from '../../lambdas/ports/logger.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';

const BASE = 'http://127.0.0.1:8787';
const GUARD = { allowedHosts: ['127.0.0.1:8787'], allowedOrigins: [] as string[] };
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

let store: MemoryStore;
let key: string;
let keyId: string;

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
  ({ key, id: keyId } = await new KeyRepository(store.sql, { pepper: async () => store.pepper }).create('front door', null));
}, 300_000);
afterAll(() => store?.sql.close());

/** A logger that keeps each line as `level event fields`. */
function recorder() {
  const lines: string[] = [];
  const at = (level: string) => (event: string, fields?: object) => void lines.push(`${level} ${event} ${JSON.stringify(fields ?? {})}`);
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } satisfies Logger };
}

/** `/mcp` and OAuth over `sql` (the real store, or one that fails), as both runtimes build them. */
function routesOver(sql: Sql, logger: Logger): EndpointRoutes {
  const secrets = { pepper: async () => store.pepper };
  const keys = oauthKeyResolver(new KeyRepository(sql, secrets), sql, secrets);
  const quota = new SqlQuotaStore(sql);
  const mcp = createMcpHttpHandler({
    config: { guestDailyLimit: 5, getStream: { mode: 'close', retryMs: 1000 } },
    keys,
    quota,
    secrets,
    invoker: new InProcessToolInvoker(store.tools),
    logger,
  });
  const oauth = createOAuthRoutes({
    sql,
    secrets,
    keys,
    redirectAllowlist: [],
    logger,
    quota,
    registrationsPerHour: 10,
    registrationsTotalPerHour: 60,
    pendingClientsMax: 100,
  });
  return { mcp, oauth };
}

/** A store whose every statement fails with `error`. */
function failingSql(error: () => Error): Sql {
  const fail = async () => {
    throw error();
  };
  return { query: fail, transaction: fail, close: async () => undefined } as unknown as Sql;
}

function call(endpoint: Endpoint, path: string, init: RequestInit = {}) {
  return endpoint(new Request(`${BASE}${path}`, init), { clientIp: '198.51.100.9', baseUrl: BASE });
}

const docs = (request: Request) => (new URL(request.url).pathname === '/docs.md' ? new Response('# docs') : undefined);

describe('the front door', () => {
  it('refuses a foreign Host on every path before it waits for the store', async () => {
    const { logger } = recorder();
    const never = new Promise<EndpointRoutes>(() => undefined);
    const endpoint = createEndpoint({ guard: GUARD, site: docs, routes: never, logger });
    for (const path of ['/mcp', '/oauth/token', '/.well-known/oauth-authorization-server', '/docs.md', '/elsewhere']) {
      const response = await call(endpoint, path, { headers: { Host: 'rebound.example' } });
      expect(response.status, path).toBe(403);
      expect((await response.json()).error.message, path).toMatch(/Host not allowed/);
    }
  });

  it('serves documentation while the store is still opening, and answers the rest once it is open', async () => {
    const { logger } = recorder();
    let open!: (routes: EndpointRoutes) => void;
    const endpoint = createEndpoint({ guard: GUARD, site: docs, routes: new Promise((resolve) => (open = resolve)), logger });
    expect(await (await call(endpoint, '/docs.md')).text()).toBe('# docs');
    const metadata = call(endpoint, '/.well-known/oauth-authorization-server');
    open(routesOver(store.sql, logger));
    expect((await (await metadata).json()).token_endpoint).toBe(`${BASE}/oauth/token`);
    expect((await call(endpoint, '/elsewhere')).status).toBe(404);
  });

  it('holds /mcp to the Origin allow-list and lets any origin read the OAuth endpoints', async () => {
    const { logger } = recorder();
    const endpoint = createEndpoint({ guard: GUARD, routes: routesOver(store.sql, logger), logger });
    const foreign = { Origin: 'https://page.example' };
    expect((await call(endpoint, '/mcp', { method: 'POST', headers: { ...MCP_HEADERS, ...foreign }, body: LIST })).status).toBe(403);
    const metadata = await call(endpoint, '/.well-known/oauth-protected-resource/mcp', { headers: foreign });
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('takes an access token only at the resource it was issued for, and names the metadata in the 401', async () => {
    const { logger } = recorder();
    const endpoint = createEndpoint({ guard: GUARD, routes: routesOver(store.sql, logger), logger });
    const token = (audience: string) => signAccessToken(store.pepper, { keyId, audience, clientHash: 'c', expiresAt: Math.floor(Date.now() / 1000) + 600 });
    const list = (bearer: string) => call(endpoint, '/mcp', { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${bearer}` }, body: LIST });

    const elsewhere = await list(token('https://other.example/mcp'));
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    expect((await list(token(`${BASE}/mcp`))).status).toBe(200);
    expect((await list(key)).status).toBe(200);
  });
});

describe('one catch for every route', () => {
  const resuming = () => new UnavailableError(20);
  const broken = () => new Error('relation "secret_table" does not exist');

  it('answers a resuming store with 503 and Retry-After on /mcp, as JSON-RPC, logged as a warning', async () => {
    const { lines, logger } = recorder();
    const endpoint = createEndpoint({ guard: GUARD, routes: routesOver(failingSql(resuming), logger), logger });
    const response = await call(endpoint, '/mcp', { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${key}` }, body: LIST });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('20');
    expect((await response.json()).error.code).toBe(-32000);
    expect(lines).toContain('warn request_failed {"route":"mcp","error":"UnavailableError:unavailable"}');
  });

  it('answers any other fault on /mcp with a 500 that names no cause, logged as an error', async () => {
    const { lines, logger } = recorder();
    const endpoint = createEndpoint({ guard: GUARD, routes: routesOver(failingSql(broken), logger), logger });
    const response = await call(endpoint, '/mcp', { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${key}` }, body: LIST });
    expect(response.status).toBe(500);
    expect(await response.text()).not.toMatch(/secret_table/);
    expect(lines.filter((line) => line.startsWith('error '))).toEqual(['error request_failed {"route":"mcp","error":"Error"}']);
  });

  it('answers OAuth endpoints on a resuming store with 503, Retry-After and OAuth error JSON a browser client can read', async () => {
    const { lines, logger } = recorder();
    const endpoint = createEndpoint({ guard: GUARD, routes: routesOver(failingSql(resuming), logger), logger });
    const body = JSON.stringify({ client_name: 'c', redirect_uris: ['http://127.0.0.1:9/cb'] });
    const response = await call(endpoint, '/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('20');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect((await response.json()).error).toBe('temporarily_unavailable');
    expect(lines).toContain('warn request_failed {"route":"oauth","path":"/oauth/register","error":"UnavailableError:unavailable"}');
    expect(lines.some((line) => line.startsWith('info oauth_request {"path":"/oauth/register","method":"POST","status":503'))).toBe(true);
  });

  it('answers other OAuth faults with a logged 500: OAuth JSON for the token endpoint, a page for the consent form', async () => {
    const { lines, logger } = recorder();
    const endpoint = createEndpoint({ guard: GUARD, routes: routesOver(failingSql(broken), logger), logger });
    const token = await call(endpoint, '/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&refresh_token=kb_rt_x&client_id=c',
    });
    expect(token.status).toBe(500);
    const tokenBody = await token.text();
    expect(JSON.parse(tokenBody).error).toBe('server_error');
    expect(tokenBody).not.toMatch(/secret_table/);
    const consent = await call(endpoint, '/oauth/authorize?client_id=https%3A%2F%2Fclient.example%2Fmeta.json&response_type=code');
    expect(consent.status).toBe(500);
    expect(consent.headers.get('content-type')).toMatch(/^text\/html/);
    expect(lines.filter((line) => line.startsWith('error '))).toEqual([
      'error request_failed {"route":"oauth","path":"/oauth/token","error":"Error"}',
      'error request_failed {"route":"oauth","path":"/oauth/authorize","error":"Error"}',
    ]);
  });

  it('answers a fault while serving a documentation file with a plain 500', async () => {
    const { lines, logger } = recorder();
    const endpoint = createEndpoint({
      guard: GUARD,
      site: () => {
        throw broken();
      },
      logger,
    });
    const response = await call(endpoint, '/docs.md');
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('Internal Server Error\n');
    expect(lines).toEqual(['error request_failed {"route":"site","error":"Error"}']);
  });
});
