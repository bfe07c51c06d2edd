/**
 * OAuth through the AWS runtime, offline: a connector's requests become the API
 * Gateway proxy events the stage would send (the stage prefix `/v1` stripped from
 * the path, the query string split out; paths outside the stage answered as API
 * Gateway answers them) for the gateway function's handler, over the Data API
 * adapter (PGlite behind a Data-API-compatible endpoint), DynamoDB quotas on
 * dynalite and the pepper from a mocked Secrets Manager client; tool calls go
 * through the mocked Lambda service to the real tool entries.
 *
 * Covered: the metadata under the stage on the API's own host; discovery from the
 * 401 and by RFC 8414 on a custom domain mapped to the stage; a client identified by its metadata document (served through the injected
 * fetcher) and one registered dynamically, consent with an API key, PKCE, a tool
 * call with the access token through the official SDK client, audience binding,
 * refresh rotation, and the key's revocation ending access and refresh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { exchangeAuthorization, refreshAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { TOOL_FUNCTIONS, startAwsBackends, type AwsBackends, answerInvokes, toolEntries } from '../support/aws-backends.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';
import { createGatewayHandler, gatewayDeps, gatewayOAuthRoutes } from '../../lambdas/aws/gateway.ts';
import { MCP_ACCEPT, authorize, connectWithToken, discoverFrom401, openConsent, type Discovered } from '../support/oauth-flow.ts';

/** The API's own host name: everything under the stage, `/v1`. */
const HOST = 'abc123.execute-api.us-east-1.amazonaws.com';
const STAGE_BASE = `https://${HOST}/v1`;
/** A custom domain mapped to the stage at its root, which RFC 8414 discovery needs. */
const CUSTOM_HOST = 'mcp.example.com';
const BASE = `https://${CUSTOM_HOST}`;
const MCP_URL = `${BASE}/mcp`;
const PEPPER_HEX = 'cd'.repeat(32);
const FUNCTIONS = TOOL_FUNCTIONS;
const CLAUDE_CALLBACK = 'https://claude.ai/api/mcp/auth_callback';
const CLIENT_DOCUMENT_URL = 'https://connector.example/oauth/client.json';
const context = { functionName: 'test', awsRequestId: 'req', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
let backends: AwsBackends;
let keys: KeyRepository;
let handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
const documentsFetched: string[] = [];

/** Client metadata documents on the web, as the injected fetcher serves them. */
const clientDocuments: Record<string, unknown> = {
  [CLIENT_DOCUMENT_URL]: { client_id: CLIENT_DOCUMENT_URL, client_name: 'Web connector', redirect_uris: [CLAUDE_CALLBACK], token_endpoint_auth_method: 'none' },
  'https://impostor.example/client.json': { client_id: CLIENT_DOCUMENT_URL, redirect_uris: [CLAUDE_CALLBACK] },
  'https://offlist.example/client.json': { client_id: 'https://offlist.example/client.json', redirect_uris: ['https://offlist.example/callback'] },
};
const documentFetch: typeof fetch = async (input) => {
  const url = String(input);
  documentsFetched.push(url);
  const document = clientDocuments[url];
  return document ? Response.json(document) : new Response('not found', { status: 404 });
};

/** The stage as API Gateway runs it: paths under `/v1` reach the function without the prefix; others get 403. */
function viaStage(sourceIp = '203.0.113.9', host = CUSTOM_HOST): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const onStage = host === HOST ? url.pathname.startsWith('/v1/') : true;
    if (!onStage) return Response.json({ message: 'Missing Authentication Token' }, { status: 403 });
    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
      multiValueHeaders[name] = [value];
    });
    headers.Host = host;
    const query: Record<string, string[]> = {};
    for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
    const path = host === HOST ? url.pathname.slice('/v1'.length) : url.pathname;
    const event = {
      httpMethod: request.method,
      path,
      resource: path,
      headers,
      multiValueHeaders,
      queryStringParameters: null,
      multiValueQueryStringParameters: url.search ? query : null,
      pathParameters: null,
      stageVariables: null,
      body: request.method === 'GET' ? null : await request.text(),
      isBase64Encoded: false,
      requestContext: { stage: 'v1', domainName: host, identity: { sourceIp } } as APIGatewayProxyEvent['requestContext'],
    } as APIGatewayProxyEvent;
    const result = await handler(event);
    const out = new Headers();
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) for (const v of values) out.append(name, String(v));
    return new Response(result.statusCode === 202 || result.statusCode === 204 || result.statusCode === 302 || result.body === '' ? null : result.body, { status: result.statusCode, headers: out });
  };
}

const listTools = (token: string, fetchFn = viaStage(), url = MCP_URL) =>
  fetchFn(url, { method: 'POST', headers: { ...MCP_ACCEPT, Authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });

async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error, 'the request should have been refused').toBeDefined();
  return (error as { errorCode?: string }).errorCode ?? String(error);
}

beforeAll(async () => {
  backends = await startAwsBackends({ embeddings: 'none', keyCacheSeconds: '0' });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  const sql = backends.sql;
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  keys = new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') });
  answerInvokes(lambda, await toolEntries(), () => context);
  const deps = gatewayDeps(process.env, silentLogger);
  handler = createGatewayHandler(deps, gatewayOAuthRoutes(process.env, deps, { fetch: documentFetch }));
}, 120_000);

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await backends?.close();
});

describe('OAuth through the AWS handlers', () => {
  let found: Discovered;
  let apiKey: { id: string; key: string };
  let tokens: OAuthTokens;
  const documentClient = { client_id: CLIENT_DOCUMENT_URL };

  it('names the metadata under the stage in its 401 on the API\'s own host', async () => {
    const stage = viaStage(undefined, HOST);
    const refused = await listTools(`kb_live_${'z'.repeat(43)}`, stage, `${STAGE_BASE}/mcp`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${STAGE_BASE}/.well-known/oauth-protected-resource/mcp"`);
    const resource = await (await stage(`${STAGE_BASE}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${STAGE_BASE}/mcp`, authorization_servers: [STAGE_BASE] });
    const server = await (await stage(`${STAGE_BASE}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({ issuer: STAGE_BASE, authorization_endpoint: `${STAGE_BASE}/oauth/authorize` });
  });

  it('is discovered on a custom domain as a connector does it: from the 401, then RFC 8414', async () => {
    found = await discoverFrom401(viaStage(), MCP_URL);
    expect(found.resourceMetadataUrl.href).toBe(`${BASE}/.well-known/oauth-protected-resource/mcp`);
    expect(found.resource).toMatchObject({ resource: MCP_URL, authorization_servers: [BASE] });
    expect(found.server).toMatchObject({ issuer: BASE, token_endpoint: `${BASE}/oauth/token`, client_id_metadata_document_supported: true });
  });

  it('refuses client metadata documents that misname themselves, list an unlisted redirect URI, or are not https', async () => {
    for (const clientId of ['https://impostor.example/client.json', 'https://offlist.example/client.json', 'http://connector.example/oauth/client.json']) {
      const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: { client_id: clientId }, redirectUrl: CLAUDE_CALLBACK });
      const consent = await openConsent(viaStage(), authorizationUrl);
      expect(consent.page.status, clientId).toBe(400);
      expect(consent.page.headers.get('location')).toBeNull();
    }
    expect(documentsFetched).not.toContain('http://connector.example/oauth/client.json');
  });

  it('authorizes a client known by its metadata document with an API key, and its token calls tools', async () => {
    apiKey = await keys.create('web connector owner', null);
    const { code, codeVerifier } = await authorize(viaStage(), found, documentClient, CLAUDE_CALLBACK, apiKey.key);
    expect(documentsFetched).toContain(CLIENT_DOCUMENT_URL);
    tokens = await exchangeAuthorization(found.issuer, {
      metadata: found.server,
      clientInformation: documentClient,
      authorizationCode: code,
      codeVerifier,
      redirectUri: CLAUDE_CALLBACK,
      resource: new URL(MCP_URL),
      fetchFn: viaStage(),
    });
    const client = await connectWithToken(viaStage(), MCP_URL, tokens.access_token);
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'retry with backoff' } });
    expect(result.isError).toBeFalsy();
    await client.close();
  });

  it('refuses the token at another address of the API (audience), and a wrong PKCE verifier', async () => {
    const elsewhere = await listTools(tokens.access_token, viaStage(undefined, HOST), `${STAGE_BASE}/mcp`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain(`resource_metadata="${STAGE_BASE}/.well-known/oauth-protected-resource/mcp"`);

    const { code } = await authorize(viaStage(), found, documentClient, CLAUDE_CALLBACK, apiKey.key);
    const wrongVerifier = exchangeAuthorization(found.issuer, {
      metadata: found.server,
      clientInformation: documentClient,
      authorizationCode: code,
      codeVerifier: 'v'.repeat(43),
      redirectUri: CLAUDE_CALLBACK,
      fetchFn: viaStage(),
    });
    expect(await oauthErrorOf(wrongVerifier)).toBe('invalid_grant');
  });

  it('registers a client dynamically and runs the same grant for it', async () => {
    const fetchFn = viaStage();
    const registered = await registerClient(found.issuer, { metadata: found.server, clientMetadata: { client_name: 'ChatGPT', redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'] }, fetchFn });
    const { code, codeVerifier } = await authorize(fetchFn, found, registered, 'https://chatgpt.com/connector_platform_oauth_redirect', apiKey.key);
    const issued = await exchangeAuthorization(found.issuer, { metadata: found.server, clientInformation: registered, authorizationCode: code, codeVerifier, redirectUri: 'https://chatgpt.com/connector_platform_oauth_redirect', fetchFn });
    expect((await listTools(issued.access_token)).status).toBe(200);
    // A code issued to one client cannot be exchanged by another.
    const other = await authorize(fetchFn, found, registered, 'https://chatgpt.com/connector_platform_oauth_redirect', apiKey.key);
    const stolen = exchangeAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient, authorizationCode: other.code, codeVerifier: other.codeVerifier, redirectUri: 'https://chatgpt.com/connector_platform_oauth_redirect', fetchFn });
    expect(await oauthErrorOf(stolen)).toBe('invalid_grant');
  });

  it('rotates the refresh token, then stops access and refresh once the key is revoked', async () => {
    const refreshed = await refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient, refreshToken: tokens.refresh_token!, fetchFn: viaStage() });
    expect((await listTools(refreshed.access_token)).status).toBe(200);
    const reused = refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient, refreshToken: tokens.refresh_token!, fetchFn: viaStage() });
    expect(await oauthErrorOf(reused)).toBe('invalid_grant');

    await keys.revoke(apiKey.id);
    const refused = await listTools(refreshed.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    const refresh = refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient, refreshToken: refreshed.refresh_token!, fetchFn: viaStage() });
    expect(await oauthErrorOf(refresh)).toBe('invalid_grant');
  });

  it('leaves guests and API keys as they were', async () => {
    const guest = await viaStage()(MCP_URL, { method: 'POST', headers: MCP_ACCEPT, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(guest.status).toBe(200);
    const key = await keys.create('plain agent', null);
    expect((await listTools(key.key)).status).toBe(200);
  });
});
