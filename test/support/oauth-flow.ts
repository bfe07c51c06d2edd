/**
 * A connector's side of chatctx's OAuth, driven with the official MCP SDK's auth
 * functions where it has them: discovery from a 401 (RFC 9728 `resource_metadata`),
 * server metadata discovery (RFC 8414), registration (RFC 7591), the authorization
 * URL with PKCE, the code exchange and refresh. The one step the SDK leaves to a
 * browser, the consent page, is done here the way a person's browser would: load
 * the page, keep its cookie, submit its form with an API key, read the redirect.
 */
import { expect } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthClientInformationMixed, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

export const MCP_ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

export interface Discovered {
  readonly resourceMetadataUrl: URL;
  readonly resource: OAuthProtectedResourceMetadata;
  readonly issuer: string;
  readonly server: AuthorizationServerMetadata;
}

/** A request with a bearer token that is not valid: the 401 names the resource metadata; from there, the server's. */
export async function discoverFrom401(fetchFn: typeof fetch, mcpUrl: string): Promise<Discovered> {
  const refused = await fetchFn(mcpUrl, {
    method: 'POST',
    headers: { ...MCP_ACCEPT, Authorization: `Bearer kb_live_${'x'.repeat(43)}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(refused.status).toBe(401);
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(refused);
  expect(resourceMetadataUrl).toBeDefined();
  const resource = await discoverOAuthProtectedResourceMetadata(mcpUrl, { resourceMetadataUrl: resourceMetadataUrl! }, fetchFn);
  const issuer = resource.authorization_servers![0]!;
  const server = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
  expect(server).toBeDefined();
  return { resourceMetadataUrl: resourceMetadataUrl!, resource, issuer, server: server! };
}

export interface Consent {
  readonly page: Response;
  readonly html: string;
  readonly cookie: string;
  readonly fields: Record<string, string>;
  readonly url: URL;
}

/** Opens the authorization URL as a browser would: the consent page, its form fields and its cookie. */
export async function openConsent(fetchFn: typeof fetch, url: URL): Promise<Consent> {
  const page = await fetchFn(url, { redirect: 'manual' });
  const html = await page.text();
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[name!] = unescape(value!);
  return { page, html, cookie, fields, url };
}

/** Submits the consent form with an API key; returns the redirect (or the page shown instead). */
export function submitConsent(fetchFn: typeof fetch, consent: Consent, apiKey: string, options: { cookie?: string; decision?: string } = {}): Promise<Response> {
  return fetchFn(consent.url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: options.cookie ?? consent.cookie },
    body: new URLSearchParams({ ...consent.fields, api_key: apiKey, decision: options.decision ?? 'allow' }),
  });
}

/** The whole front channel: authorization URL with PKCE, consent with the key, the code from the redirect. */
export async function authorize(
  fetchFn: typeof fetch,
  found: Discovered,
  client: OAuthClientInformationMixed,
  redirectUri: string,
  apiKey: string,
): Promise<{ code: string; codeVerifier: string }> {
  const state = 'state-' + Math.random().toString(36).slice(2);
  const { authorizationUrl, codeVerifier } = await startAuthorization(found.issuer, {
    metadata: found.server,
    clientInformation: client,
    redirectUrl: redirectUri,
    state,
    resource: new URL(found.resource.resource),
  });
  const consent = await openConsent(fetchFn, authorizationUrl);
  expect(consent.page.status, consent.html).toBe(200);
  const answer = await submitConsent(fetchFn, consent, apiKey);
  expect(answer.status, await answer.clone().text()).toBe(302);
  const location = new URL(answer.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(redirectUri);
  expect(location.searchParams.get('state')).toBe(state);
  expect(location.searchParams.get('iss')).toBe(found.issuer);
  return { code: location.searchParams.get('code')!, codeVerifier };
}

/** The official SDK client, sending the access token as its Authorization header. */
export async function connectWithToken(fetchFn: typeof fetch, mcpUrl: string, accessToken: string): Promise<Client> {
  const client = new Client({ name: 'oauth-connector', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { fetch: fetchFn, requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } });
  await client.connect(transport);
  return client;
}

function unescape(value: string): string {
  return value.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}
