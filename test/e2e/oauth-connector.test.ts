/**
 * OAuth for connector clients against the running local server, as a desktop
 * connector would drive it: discovery from a 401, dynamic client registration,
 * the consent page with an API key issued by the real CLI, the code exchange with
 * PKCE, tool calls through the official SDK client with the access token, refresh
 * with rotation, and the key's revocation ending the grant. Guests and API keys
 * keep working as before beside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchangeAuthorization, refreshAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { MCP_ACCEPT, authorize, connectWithToken, discoverFrom401, openConsent, submitConsent, type Discovered } from '../support/oauth-flow.ts';

const REDIRECT = 'http://127.0.0.1:33418/callback';
let server: TestServer;
let origin: string;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
  origin = new URL(server.url).origin;
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

async function cli(...args: string[]) {
  const result = await runCli(['--json', ...args], { CHATCTX_DATA_DIR: server.dataDir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as any;
}

const listTools = (headers: Record<string, string> = {}) =>
  fetch(server.url, { method: 'POST', headers: { ...MCP_ACCEPT, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });

async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error, 'the request should have been refused').toBeDefined();
  return (error as { errorCode?: string }).errorCode ?? String(error);
}

describe('OAuth on the local server', () => {
  let found: Discovered;
  let client: OAuthClientInformationFull;
  let key: { id: string; key: string };
  let tokens: OAuthTokens;

  it('leaves guests alone: no Authorization header is still a guest call, not a 401', async () => {
    const res = await listTools();
    expect(res.status).toBe(200);
    expect(res.headers.get('www-authenticate')).toBeNull();
  });

  it('names its protected resource metadata in the 401 for a bad key, and its authorization server from there', async () => {
    found = await discoverFrom401(fetch, server.url);
    expect(found.resourceMetadataUrl.href).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);
    expect(found.resource.resource).toBe(server.url);
    expect(found.issuer).toBe(origin);
    expect(found.server).toMatchObject({
      issuer: origin,
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
    const root = await fetch(`${origin}/.well-known/oauth-protected-resource`);
    expect(await root.json()).toEqual(found.resource);
  });

  it('registers a loopback client dynamically, and refuses a redirect URI off the allow-list or escaping its wildcard', async () => {
    client = await registerClient(found.issuer, { metadata: found.server, clientMetadata: { client_name: 'Desktop connector', redirect_uris: [REDIRECT] }, fetchFn: fetch });
    expect(client.client_id).toMatch(/^kb_client_/);
    expect(client.token_endpoint_auth_method).toBe('none');
    // The last one is under the default `https://chatgpt.com/connector/oauth/*` as text, and resolves outside it.
    for (const uri of ['https://attacker.example/callback', 'https://chatgpt.com/connector/oauth/../../evil-path?x=1']) {
      const refused = await fetch(`${origin}/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri] }),
      });
      expect(refused.status, uri).toBe(400);
      expect((await refused.json()).error).toBe('invalid_redirect_uri');
    }
  });

  it('shows a consent page that refuses a wrong key and a form posted without its cookie', async () => {
    key = await cli('keys', 'create', '--name', 'connector owner');
    const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: client, redirectUrl: REDIRECT, resource: new URL(server.url) });
    const consent = await openConsent(fetch, authorizationUrl);
    expect(consent.page.status).toBe(200);
    expect(consent.html).toContain('Desktop connector');
    expect(consent.page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const wrongKey = await submitConsent(fetch, consent, `kb_live_${'y'.repeat(43)}`);
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.text()).toContain('not an active chatctx API key');
    const forged = await submitConsent(fetch, consent, key.key, { cookie: 'chatctx_oauth_csrf=forged' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    expect(await forged.text()).toContain('expired or was not sent from this page');
  });

  it('exchanges the code (PKCE) for an hour-long access token that calls tools like the key', async () => {
    const { code, codeVerifier } = await authorize(fetch, found, client, REDIRECT, key.key);
    tokens = await exchangeAuthorization(found.issuer, { metadata: found.server, clientInformation: client, authorizationCode: code, codeVerifier, redirectUri: REDIRECT, resource: new URL(server.url), fetchFn: fetch });
    expect(tokens.access_token).toMatch(/^kb_at_/);
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeDefined();
    // A code is single use; a second use revokes what it issued (the security suite shows both).

    const mcp = await connectWithToken(fetch, server.url, tokens.access_token);
    const result = await mcp.callTool({ name: 'search_knowledge', arguments: { query: 'retry with backoff' } });
    expect(result.isError).toBeFalsy();
    await mcp.close();
  });

  it('rotates refresh tokens: the new pair works (replaying the old one is in the security suite: it revokes the family)', async () => {
    const refreshed = await refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: client, refreshToken: tokens.refresh_token!, fetchFn: fetch });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await listTools({ Authorization: `Bearer ${refreshed.access_token}` })).status).toBe(200);
    tokens = refreshed;
  });

  it('ends the grant when the key is revoked: its access token gets a 401 naming the metadata, its refresh token is refused', async () => {
    expect((await listTools({ Authorization: `Bearer ${key.key}` })).status).toBe(200);
    await cli('keys', 'revoke', key.id);
    const refused = await listTools({ Authorization: `Bearer ${tokens.access_token}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`);
    const refresh = refreshAuthorization(found.issuer, { metadata: found.server, clientInformation: client, refreshToken: tokens.refresh_token!, fetchFn: fetch });
    expect(await oauthErrorOf(refresh)).toBe('invalid_grant');
  });
});
