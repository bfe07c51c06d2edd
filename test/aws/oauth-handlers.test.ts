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
 * refresh rotation, and the key's revocation ending access and refresh. Replays,
 * limits and metering are in `oauth-security.test.ts` (the shared RFC 9700 suite).
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
import { startTlsServer, type TlsServer } from '../support/tls-server.ts';
import { stageFetch } from '../support/api-gateway-fetch.ts';
import { UntrustedFetcher } from '../../lambdas/streams/untrusted-fetch.ts';

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
/** Names the document host answers to; the injected resolver sends them to 127.0.0.1. */
const DOCUMENT_HOSTS = ['connector.example', 'impostor.example', 'offlist.example', 'internal.example'];
let documentHost: TlsServer;
let CLIENT_DOCUMENT_URL: string;
const context = { functionName: 'test', awsRequestId: 'req', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
let backends: AwsBackends;
let keys: KeyRepository;
let handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
/** Every document request the host received, as `host/path`. */
const documentsFetched: string[] = [];
const documentUrl = (host: string, path: string) => `https://${host}:${documentHost.port}${path}`;

/**
 * Client metadata documents on a real TLS server that the made-up names resolve to.
 * The gateway's fetcher trusts its certificate and may connect to 127.0.0.1 only
 * for those names; `internal.example` is fetched under the default policy in the
 * SSRF test, which must refuse it before connecting.
 */
function serveDocument(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void {
  const host = (req.headers.host ?? '').split(':')[0]!;
  documentsFetched.push(`${host}${req.url}`);
  const documents: Record<string, unknown> = {
    'connector.example/oauth/client.json': { client_id: CLIENT_DOCUMENT_URL, client_name: 'Web connector', redirect_uris: [CLAUDE_CALLBACK], token_endpoint_auth_method: 'none' },
    'impostor.example/client.json': { client_id: CLIENT_DOCUMENT_URL, redirect_uris: [CLAUDE_CALLBACK] },
    'offlist.example/client.json': { client_id: documentUrl('offlist.example', '/client.json'), redirect_uris: ['https://offlist.example/callback'] },
    'internal.example/client.json': { client_id: documentUrl('internal.example', '/client.json'), redirect_uris: [CLAUDE_CALLBACK] },
  };
  const document = documents[`${host}${req.url}`];
  if (!document) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(JSON.stringify(document));
}
const resolveDocumentHosts = async (host: string) => (DOCUMENT_HOSTS.includes(host) ? ['127.0.0.1'] : Promise.reject(new Error('ENOTFOUND')));

/** The stage as API Gateway runs it (`stageFetch`), from one client address, to the test's handler or another. */
const viaStage = (sourceIp?: string, host = CUSTOM_HOST, target?: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>): typeof fetch =>
  stageFetch((event) => (target ?? handler)(event), { sourceIp, host });

const listTools = (token: string, fetchFn = viaStage(), url = MCP_URL) =>
  fetchFn(url, { method: 'POST', headers: { ...MCP_ACCEPT, Authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });

async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error, 'the request should have been refused').toBeDefined();
  return (error as { errorCode?: string }).errorCode ?? String(error);
}

beforeAll(async () => {
  documentHost = await startTlsServer(DOCUMENT_HOSTS, serveDocument);
  CLIENT_DOCUMENT_URL = documentUrl('connector.example', '/oauth/client.json');
  backends = await startAwsBackends({ embeddings: 'none', keyCacheSeconds: '0' });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  const sql = backends.sql;
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  keys = new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') });
  answerInvokes(lambda, await toolEntries(), () => context);
  const deps = gatewayDeps(process.env, silentLogger);
  // Only the test's own document names may reach 127.0.0.1; everything else is the default policy.
  const fetcher = new UntrustedFetcher({ resolve: resolveDocumentHosts, allowAddress: (address) => address === '127.0.0.1', ca: documentHost.cert });
  handler = createGatewayHandler(deps, gatewayOAuthRoutes(process.env, deps, { fetcher }));
}, 300_000);

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await backends?.close();
  await documentHost?.close();
});

describe('OAuth through the AWS handlers', () => {
  let found: Discovered;
  let apiKey: { id: string; key: string };
  let tokens: OAuthTokens;
  const documentClient = () => ({ client_id: CLIENT_DOCUMENT_URL });

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

  it('refuses client metadata documents that misname themselves, list an unlisted redirect URI, are not https or are missing, all with one message', async () => {
    const messages = new Set<string>();
    const ids = [
      documentUrl('impostor.example', '/client.json'),
      documentUrl('offlist.example', '/client.json'),
      documentUrl('connector.example', '/missing.json'),
      'https://unresolvable.example/client.json',
    ];
    for (const clientId of ids) {
      const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: { client_id: clientId }, redirectUrl: CLAUDE_CALLBACK });
      const consent = await openConsent(viaStage('198.51.100.20'), authorizationUrl);
      expect(consent.page.status, clientId).toBe(400);
      expect(consent.page.headers.get('location')).toBeNull();
      messages.add(/<p[^>]*>([^<]*could not be used[^<]*)<\/p>/.exec(consent.html)?.[1] ?? consent.html);
    }
    // Unreachable, wrong client_id and a bad redirect are not told apart to the caller.
    expect(messages.size).toBe(1);
    // A plain http client id is not a metadata document at all: refused without a fetch.
    const fetched = documentsFetched.length;
    const plain = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: { client_id: CLIENT_DOCUMENT_URL.replace('https:', 'http:') }, redirectUrl: CLAUDE_CALLBACK });
    expect((await openConsent(viaStage('198.51.100.20'), plain.authorizationUrl)).page.status).toBe(400);
    expect(documentsFetched.length).toBe(fetched);
  });

  it('refuses a metadata document host that resolves to loopback under the default policy, before connecting (SSRF)', async () => {
    const logged: string[] = [];
    const deps = { ...gatewayDeps(process.env, silentLogger), logger: { ...silentLogger, warn: (event: string, fields?: Record<string, unknown>) => logged.push(`${event}:${fields?.security_event ?? ''}`) } };
    const strict = createGatewayHandler(deps, gatewayOAuthRoutes(process.env, deps, { fetcher: new UntrustedFetcher({ resolve: resolveDocumentHosts, ca: documentHost.cert }) }));
    const before = documentsFetched.length;
    const internal = documentUrl('internal.example', '/client.json');
    const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: { client_id: internal }, redirectUrl: CLAUDE_CALLBACK });
    const consent = await openConsent(viaStage(undefined, CUSTOM_HOST, strict), authorizationUrl);
    expect(consent.page.status).toBe(400);
    expect(consent.html).toContain('could not be used');
    expect(documentsFetched.length).toBe(before);
    expect(logged).toContain('oauth_ssrf_refused:ssrf_refused');
  });

  it('keeps a metadata document as long as its Cache-Control allows, instead of fetching it for every request', async () => {
    const fetchedBefore = documentsFetched.filter((f) => f === 'connector.example/oauth/client.json').length;
    for (let i = 0; i < 3; i++) {
      const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient(), redirectUrl: CLAUDE_CALLBACK });
      expect((await openConsent(viaStage(), authorizationUrl)).page.status).toBe(200);
    }
    expect(documentsFetched.filter((f) => f === 'connector.example/oauth/client.json').length - fetchedBefore).toBeLessThanOrEqual(1);
  });

  it('authorizes a client known by its metadata document with an API key, and its token calls tools', async () => {
    apiKey = await keys.create('web connector owner', null);
    const { code, codeVerifier } = await authorize(viaStage(), found, documentClient(), CLAUDE_CALLBACK, apiKey.key);
    expect(documentsFetched).toContain('connector.example/oauth/client.json');
    tokens = await exchangeAuthorization(found.issuer, {
      metadata: found.server,
      clientInformation: documentClient(),
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

    const { code } = await authorize(viaStage(), found, documentClient(), CLAUDE_CALLBACK, apiKey.key);
    const wrongVerifier = exchangeAuthorization(found.issuer, {
      metadata: found.server,
      clientInformation: documentClient(),
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
    const stolen = exchangeAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient(), authorizationCode: other.code, codeVerifier: other.codeVerifier, redirectUri: 'https://chatgpt.com/connector_platform_oauth_redirect', fetchFn });
    expect(await oauthErrorOf(stolen)).toBe('invalid_grant');
  });

  it('rotates the refresh token, then stops access and refresh once the key is revoked', async () => {
    const refreshed = await refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient(), refreshToken: tokens.refresh_token!, fetchFn: viaStage() });
    expect((await listTools(refreshed.access_token)).status).toBe(200);

    await keys.revoke(apiKey.id);
    const refused = await listTools(refreshed.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    const refresh = refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: documentClient(), refreshToken: refreshed.refresh_token!, fetchFn: viaStage() });
    expect(await oauthErrorOf(refresh)).toBe('invalid_grant');
  });

  it('leaves guests and API keys as they were', async () => {
    const guest = await viaStage()(MCP_URL, { method: 'POST', headers: MCP_ACCEPT, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(guest.status).toBe(200);
    const key = await keys.create('plain agent', null);
    expect((await listTools(key.key)).status).toBe(200);
  });
});
