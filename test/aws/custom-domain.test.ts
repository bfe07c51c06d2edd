/**
 * The URLs the gateway function advertises on the stack's custom domain
 * (`chatctx:domainName`, mapped at its root to the stage) and on the API's own
 * execute-api host, from the REST proxy events API Gateway sends for each:
 *
 * - execute-api: `https://<api>.execute-api.<region>.amazonaws.com/v1/mcp` arrives
 *   with `path` `/mcp`, `requestContext.path` `/v1/mcp`, `stage` `v1`;
 * - custom domain: `https://mcp.example.com/mcp` arrives with `path` `/mcp`,
 *   `requestContext.path` `/mcp` and still `stage` `v1`.
 *
 * The OAuth metadata, the 401's `resource_metadata` and the documentation's base
 * URL must name the host the request came in on, with `/v1` on execute-api and
 * without it on the custom domain. The Host allow-list is the one the stack sets
 * with a custom domain. No backend is touched: none of these answers reads one.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createGatewayHandler, type GatewayDeps, type GatewayHandler } from '../../lambdas/aws/gateway.ts';
import { createOAuthRoutes } from '../../lambdas/oauth/oauth-routes.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { stageBaseUrl } from '../../lambdas/aws/api-gateway-adapter.ts';
import { MCP_ACCEPT } from '../support/oauth-flow.ts';

const EXECUTE_API_HOST = 'abc123.execute-api.us-east-1.amazonaws.com';
const DOMAIN = 'mcp.example.com';
const STAGE = 'v1';

/** Nothing here may reach the database: a query would be a bug in what the test covers. */
const noSql: Sql = {
  query: () => Promise.reject(new Error('no database in this test')),
  transaction: () => Promise.reject(new Error('no database in this test')),
};

function gateway(): GatewayHandler {
  const deps: GatewayDeps = {
    // As the stack sets CHATCTX_ALLOWED_HOSTS with a custom domain: the API's own host, then the domain.
    guard: { allowedHosts: [EXECUTE_API_HOST, DOMAIN], allowedOrigins: [] },
    config: { guestDailyLimit: 250, getStream: { mode: 'close', retryMs: 3_600_000 } },
    keys: { resolve: async () => undefined },
    quota: { consume: async () => ({ allowed: true, remaining: 1 }), used: async () => 0 },
    secrets: { pepper: async () => Buffer.alloc(32, 7) },
    invoker: { invoke: () => Promise.reject(new Error('no tool calls in this test')) },
    logger: silentLogger,
  };
  const oauth = createOAuthRoutes({
    sql: noSql,
    secrets: deps.secrets,
    keys: deps.keys,
    redirectAllowlist: [],
    logger: silentLogger,
    quota: deps.quota,
    registrationsPerHour: 10,
    registrationsTotalPerHour: 60,
    pendingClientsMax: 100,
  });
  return createGatewayHandler(deps, oauth);
}

/** The REST proxy event for `method path` on `host`, as API Gateway builds it for a stage mapped at the domain's root. */
function proxyEvent(host: string, method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): APIGatewayProxyEvent {
  const headers = { Host: host, ...init.headers };
  const onExecuteApi = host === EXECUTE_API_HOST;
  return {
    httpMethod: method,
    path,
    resource: path,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: init.body ?? null,
    isBase64Encoded: false,
    requestContext: {
      stage: STAGE,
      domainName: host,
      path: onExecuteApi ? `/${STAGE}${path}` : path,
      resourcePath: path,
      httpMethod: method,
      requestId: 'req-1',
      identity: { sourceIp: '198.51.100.7' },
    } as APIGatewayProxyEvent['requestContext'],
  };
}

async function json(handler: GatewayHandler, host: string, path: string): Promise<Record<string, unknown>> {
  const result = await handler(proxyEvent(host, 'GET', path));
  expect(result.statusCode, path).toBe(200);
  return JSON.parse(result.body) as Record<string, unknown>;
}

const unknownKey = { ...MCP_ACCEPT, Authorization: `Bearer kb_live_${'z'.repeat(43)}` };
const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

describe.each([
  ['the custom domain, mapped at its root', DOMAIN, `https://${DOMAIN}`],
  ["the API's own host, under the stage", EXECUTE_API_HOST, `https://${EXECUTE_API_HOST}/${STAGE}`],
])('on %s', (_name, host, base) => {
  const handler = gateway();

  it('the authorization server metadata (RFC 8414) names this host and path prefix', async () => {
    expect(await json(handler, host, '/.well-known/oauth-authorization-server')).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
    });
  });

  it('the protected resource metadata (RFC 9728) names the MCP endpoint here, at both its paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      expect(await json(handler, host, path)).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
    }
  });

  it('the 401 for an unknown key points at the metadata here', async () => {
    const refused = await handler(proxyEvent(host, 'POST', '/mcp', { headers: unknownKey, body: toolsList }));
    expect(refused.statusCode).toBe(401);
    expect(refused.multiValueHeaders?.['www-authenticate']?.join()).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('the documentation function builds its MCP URL on the same base', () => {
    // lambdas/handlers/site.ts serves `${stageBaseUrl(event)}/mcp` in the documentation files.
    expect(stageBaseUrl(proxyEvent(host, 'GET', '/mcp.json'))).toBe(base);
  });
});

describe('the custom domain', () => {
  it('never advertises the stage in a path', async () => {
    const handler = gateway();
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp']) {
      expect(JSON.stringify(await json(handler, DOMAIN, path))).not.toContain(`/${STAGE}/`);
    }
  });

  it('is on the Host allow-list the stack sets, and a host that is not on it is refused', async () => {
    const handler = gateway();
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'check', version: '0' } } });
    expect((await handler(proxyEvent(DOMAIN, 'POST', '/mcp', { headers: MCP_ACCEPT, body: initialize }))).statusCode).toBe(200);
    expect((await handler(proxyEvent('other.example.com', 'POST', '/mcp', { headers: MCP_ACCEPT, body: initialize }))).statusCode).toBe(403);
  });
});
