/**
 * The OAuth attacks both runtimes must hold against, as one set of tests, after
 * the OAuth 2.0 Security Best Current Practice (RFC 9700): redirect URI tricks
 * (§4.1), PKCE downgrade (§4.8), code and refresh token replay (§4.5, §4.14),
 * mix-up through the `iss` parameter (§4.4), CSRF on the consent form (§4.7),
 * audience restriction (§4.10); and what keeps the public endpoints from being
 * abused: registration limits per address and in total, wrong keys on the consent
 * form metered per address, and every one of these visible in the log without a
 * secret in it.
 *
 * The runtime's test file supplies how to reach it as a given client address, how
 * to issue an API key, its log lines, and its registration limit.
 */
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_ACCEPT, authorize, discoverFrom401, openConsent, submitConsent, type Discovered } from './oauth-flow.ts';
import { seededRandom } from '../../bin/bench/seeded-random.ts';

export interface OAuthSecurityTarget {
  /** The MCP endpoint: the resource tokens are issued for. */
  readonly mcpUrl: string;
  /** Another URL that reaches the same endpoint under another resource URL, if the runtime has one. */
  readonly otherMcpUrl?: string;
  /** A fetch as seen from one client address. */
  fetchFrom(clientAddress: string): typeof fetch;
  createKey(name: string): Promise<{ id: string; key: string }>;
  /** Every log line so far, JSON each. */
  logs(): string[];
  /** Registrations per address per hour, as configured for the test. */
  readonly registrationsPerHour: number;
  /** Unconfirmed registrations held at most, as configured for the test (above what the suite leaves pending before its last test). */
  readonly pendingClientsMax: number;
}

const LOOPBACK = 'http://127.0.0.1:33418/callback';
const CLAUDE = 'https://claude.ai/api/mcp/auth_callback';

/** Requested redirect URIs that must never receive a code for a client registered with LOOPBACK and CLAUDE. */
export const REDIRECT_TRICKS: readonly string[] = [
  // Path changes.
  'https://claude.ai/api/mcp/auth_callback/',
  'https://claude.ai/api/mcp/auth_callback/../../evil',
  'https://claude.ai/api/mcp/auth_callback/..%2f..%2fevil',
  'https://claude.ai/api/mcp/auth_callback%2f..%2f..%2fevil',
  'https://claude.ai/api/mcp/auth_callbackx',
  'https://claude.ai/api/mcp/auth_callback/extra',
  'https://claude.ai/api/mcp/AUTH_CALLBACK',
  'https://claude.ai/api/mcp/./auth_callback',
  'https://claude.ai/api/mcp/%2e/auth_callback',
  'https://claude.ai/api/mcp/auth_callback%00',
  'https://claude.ai/api/mcp/auth_callback;x',
  'https://claude.ai//api/mcp/auth_callback',
  'https://claude.ai/api/mcp\\auth_callback',
  // Query, fragment, credentials.
  'https://claude.ai/api/mcp/auth_callback?next=https://evil.example',
  'https://claude.ai/api/mcp/auth_callback?',
  'https://claude.ai/api/mcp/auth_callback#',
  'https://claude.ai/api/mcp/auth_callback#evil',
  'https://evil.example@claude.ai/api/mcp/auth_callback',
  'https://claude.ai:pw@claude.ai/api/mcp/auth_callback',
  // Host and scheme changes.
  'http://claude.ai/api/mcp/auth_callback',
  'https://claude.ai:444/api/mcp/auth_callback',
  'https://claude.ai:443/api/mcp/auth_callback',
  'https://CLAUDE.ai/api/mcp/auth_callback',
  'https://claude.ai./api/mcp/auth_callback',
  'https://evil.claude.ai/api/mcp/auth_callback',
  'https://claude.ai.evil.example/api/mcp/auth_callback',
  'https://claude.ai%2eevil.example/api/mcp/auth_callback',
  'https://claude.ai\\@evil.example/api/mcp/auth_callback',
  'https://evil.example/api/mcp/auth_callback',
  'https://evil.example/https://claude.ai/api/mcp/auth_callback',
  'HTTPS://claude.ai/api/mcp/auth_callback',
  ' https://claude.ai/api/mcp/auth_callback',
  'https://claude.ai/api/mcp/auth_callback ',
  'javascript:alert(1)//https://claude.ai/api/mcp/auth_callback',
  'data:text/html,https://claude.ai/api/mcp/auth_callback',
  '//claude.ai/api/mcp/auth_callback',
  // Loopback: any port is fine (RFC 8252), nothing else may change.
  'http://127.0.0.1:33418/callback/',
  'http://127.0.0.1:33418/Callback',
  'http://127.0.0.1:33418/callback?x=1',
  'http://127.0.0.1:33418/callback#x',
  'http://127.0.0.1:33418/cb/../callback',
  'http://localhost:33418/callback',
  'http://[::1]:33418/callback',
  'http://127.0.0.2:33418/callback',
  'http://127.0.0.1.evil.example:33418/callback',
  'https://127.0.0.1:33418/callback',
  'http://user@127.0.0.1:33418/callback',
  '',
];

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const field = (text: string, name: string) => (JSON.parse(text) as Record<string, unknown>)[name];

export function describeOAuthSecurity(runtime: string, target: () => OAuthSecurityTarget): void {
  describe(`OAuth security (RFC 9700) on the ${runtime}`, () => {
    let t: OAuthSecurityTarget;
    let found: Discovered;
    let client: OAuthClientInformationFull;
    let key: { id: string; key: string };
    const from = (address = '198.51.100.1') => t.fetchFrom(address);

    /** A whole front channel from `address`, returning the code and its verifier. */
    const codeFor = (redirect = LOOPBACK, address?: string) => authorize(from(address), found, client, redirect, key.key);
    const token = async (params: Record<string, string>, address?: string) => {
      const response = await from(address)(found.server.token_endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: client.client_id, ...params }),
      });
      return { status: response.status, body: await response.text() };
    };
    const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
      token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: LOOPBACK, ...extra });
    const listTools = (accessToken: string, url = t.mcpUrl) =>
      from()(url, { method: 'POST', headers: { ...MCP_ACCEPT, Authorization: `Bearer ${accessToken}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    const authorizeUrl = (params: Record<string, string>) => {
      const url = new URL(found.server.authorization_endpoint);
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return url;
    };
    const logged = (event: string) => t.logs().filter((line) => line.includes(`"event":"${event}"`));

    it('discovers, registers a client and issues a key to consent with', async () => {
      t = target();
      found = await discoverFrom401(from(), t.mcpUrl);
      expect((found.server as Record<string, unknown>).authorization_response_iss_parameter_supported).toBe(true);
      expect(found.server.code_challenge_methods_supported).toEqual(['S256']);
      client = await registerClient(found.issuer, { metadata: found.server, clientMetadata: { client_name: 'Security suite', redirect_uris: [LOOPBACK, CLAUDE] }, fetchFn: from() });
      key = await t.createKey('security suite');
    });

    it(`never sends a code to a redirect URI the client did not register (${REDIRECT_TRICKS.length} tricks), and shows an error page instead of redirecting`, async () => {
      expect(REDIRECT_TRICKS.length).toBeGreaterThanOrEqual(40);
      const { challenge } = pkce();
      for (const trick of REDIRECT_TRICKS) {
        const url = authorizeUrl({ response_type: 'code', client_id: client.client_id, redirect_uri: trick, code_challenge: challenge, code_challenge_method: 'S256', state: 's' });
        const page = await from()(url, { redirect: 'manual' });
        expect(page.status, trick).toBe(400);
        expect(page.headers.get('location'), trick).toBeNull();
      }
      // The registered loopback redirect on another port is the same redirect to a desktop client (RFC 8252 §7.3).
      const otherPort = await from()(authorizeUrl({ response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:50123/callback', code_challenge: challenge, code_challenge_method: 'S256' }), { redirect: 'manual' });
      expect(otherPort.status).toBe(200);
    });

    it('refuses to register redirect URIs that escape an allow-list wildcard or are not exact', async () => {
      for (const uri of ['https://chatgpt.com/connector/oauth/../../evil', 'https://chatgpt.com/connector/oauth/%2e%2e/evil', 'https://chatgpt.com/connector/oauth/x?y=1', 'https://chatgpt.com/connector/oauthx', 'https://attacker.example/cb']) {
        const response = await from('198.51.100.50')(found.server.registration_endpoint!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: [uri] }) });
        expect(response.status, uri).toBe(400);
        expect(field(await response.text(), 'error'), uri).toBe('invalid_redirect_uri');
      }
    });

    it('holds PKCE: no challenge, the plain method, a missing verifier or the challenge as verifier are all refused', async () => {
      const downgrades: Record<string, string>[] = [{}, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, { code_challenge: 'a'.repeat(43) }];
      for (const params of downgrades) {
        const response = await from()(authorizeUrl({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, state: 'st', ...params }), { redirect: 'manual' });
        expect(response.status).toBe(302);
        const location = new URL(response.headers.get('location')!);
        expect(location.searchParams.get('error')).toBe('invalid_request');
        expect(location.searchParams.get('iss')).toBe(found.issuer);
        expect(location.searchParams.get('code')).toBeNull();
      }
      const { code, codeVerifier } = await codeFor();
      expect((await token({ grant_type: 'authorization_code', code, redirect_uri: LOOPBACK })).status).toBe(400);
      const challengeAsVerifier = createHash('sha256').update(codeVerifier).digest('base64url');
      expect(field((await exchange(code, challengeAsVerifier)).body, 'error')).toBe('invalid_grant');
      // A wrong verifier spends the code: the right one cannot use it afterwards.
      expect(field((await exchange(code, codeVerifier)).body, 'error')).toBe('invalid_grant');
    });

    it('revokes what a code issued when the code is used again (RFC 6749 §4.1.2)', async () => {
      const { code, codeVerifier } = await codeFor();
      const first = await exchange(code, codeVerifier);
      expect(first.status).toBe(200);
      const tokens = JSON.parse(first.body) as { access_token: string; refresh_token: string };
      expect((await listTools(tokens.access_token)).status).toBe(200);
      const replay = await exchange(code, codeVerifier);
      expect(field(replay.body, 'error')).toBe('invalid_grant');
      expect((await listTools(tokens.access_token)).status).toBe(401);
      expect(field((await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).body, 'error')).toBe('invalid_grant');
      expect(logged('oauth_token_reuse').some((line) => line.includes('"grant_type":"authorization_code"') && line.includes('"family_revoked":true'))).toBe(true);
    });

    it('revokes the whole family when a rotated refresh token is replayed: the thief and the client both lose it (RFC 9700 §4.14.2)', async () => {
      const { code, codeVerifier } = await codeFor();
      const issued = JSON.parse((await exchange(code, codeVerifier)).body) as { access_token: string; refresh_token: string };
      const rotated = await token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token });
      expect(rotated.status).toBe(200);
      const next = JSON.parse(rotated.body) as { access_token: string; refresh_token: string };
      expect((await listTools(next.access_token)).status).toBe(200);
      // The stolen, already-rotated token comes back.
      const replay = await token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token }, '203.0.113.66');
      expect(field(replay.body, 'error')).toBe('invalid_grant');
      expect((await listTools(next.access_token)).status).toBe(401);
      expect((await listTools(issued.access_token)).status).toBe(401);
      expect(field((await token({ grant_type: 'refresh_token', refresh_token: next.refresh_token })).body, 'error')).toBe('invalid_grant');
      expect(logged('oauth_token_reuse').some((line) => line.includes('"grant_type":"refresh_token"'))).toBe(true);
      // Another grant of the same key is untouched.
      const other = await codeFor();
      expect((await exchange(other.code, other.codeVerifier)).status).toBe(200);
    });

    it('names the issuer in every authorization response, success and error, against mix-up (RFC 9207)', async () => {
      const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: client, redirectUrl: LOOPBACK, state: 'mix', resource: new URL(t.mcpUrl) });
      const consent = await openConsent(from(), authorizationUrl);
      const denied = await submitConsent(from(), consent, key.key, { decision: 'deny' });
      const location = new URL(denied.headers.get('location')!);
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(location.searchParams.get('iss')).toBe(found.issuer);
      expect(location.searchParams.get('state')).toBe('mix');
      // Success is checked inside `authorize` (state and iss both carried back).
      await codeFor();
    });

    it('refuses a consent form without its own cookie (CSRF), and sends nowhere', async () => {
      const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: client, redirectUrl: LOOPBACK, resource: new URL(t.mcpUrl) });
      const consent = await openConsent(from(), authorizationUrl);
      const other = await openConsent(from(), authorizationUrl);
      for (const cookie of ['', 'chatctx_oauth_csrf=forged', other.cookie]) {
        const response = await submitConsent(from(), consent, key.key, { cookie });
        expect(response.status, cookie).toBe(403);
        expect(response.headers.get('location')).toBeNull();
      }
      const noToken = await from()(consent.url, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: consent.cookie },
        body: new URLSearchParams({ ...consent.fields, csrf: '', api_key: key.key, decision: 'allow' }),
      });
      expect(noToken.status).toBe(403);
      expect(logged('oauth_consent_refused').some((line) => line.includes('"security_event":"csrf"'))).toBe(true);
    });

    it('binds tokens to this resource: another resource is refused at authorization, at the token endpoint and at the MCP endpoint', async () => {
      const { challenge } = pkce();
      const elsewhere = await from()(authorizeUrl({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://other.example/mcp' }), { redirect: 'manual' });
      expect(new URL(elsewhere.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
      const { code, codeVerifier } = await codeFor();
      expect(field((await exchange(code, codeVerifier, { resource: 'https://other.example/mcp' })).body, 'error')).toBe('invalid_target');
      if (t.otherMcpUrl) {
        const again = await codeFor();
        const tokens = JSON.parse((await exchange(again.code, again.codeVerifier)).body) as { access_token: string };
        expect((await listTools(tokens.access_token)).status).toBe(200);
        expect((await listTools(tokens.access_token, t.otherMcpUrl)).status).toBe(401);
      }
    });

    it('asks for redirect_uri at the token endpoint exactly when the authorization request named it', async () => {
      const single = await registerClient(found.issuer, { metadata: found.server, clientMetadata: { redirect_uris: [LOOPBACK] }, fetchFn: from('198.51.100.60') });
      const withoutRedirect = async () => {
        const { verifier, challenge } = pkce();
        const consent = await openConsent(from(), authorizeUrl({ response_type: 'code', client_id: single.client_id, code_challenge: challenge, code_challenge_method: 'S256' }));
        expect(consent.page.status).toBe(200);
        const answer = await submitConsent(from(), consent, key.key);
        return { code: new URL(answer.headers.get('location')!).searchParams.get('code')!, verifier };
      };
      const omitted = await withoutRedirect();
      const ok = await token({ client_id: single.client_id, grant_type: 'authorization_code', code: omitted.code, code_verifier: omitted.verifier });
      expect(ok.status, ok.body).toBe(200);
      const named = await authorize(from(), found, single, LOOPBACK, key.key);
      const missing = await token({ client_id: single.client_id, grant_type: 'authorization_code', code: named.code, code_verifier: named.codeVerifier });
      expect(field(missing.body, 'error')).toBe('invalid_grant');
    });

    it('keeps registrations small: at most 5 redirect URIs of 512 characters, a name of 100, a body of 4 KiB', async () => {
      const register = (body: unknown, raw?: string) =>
        from('198.51.100.70')(found.server.registration_endpoint!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: raw ?? JSON.stringify(body) });
      const six = Array.from({ length: 6 }, (_, i) => `http://127.0.0.1:${4000 + i}/cb`);
      expect((await register({ redirect_uris: six })).status).toBe(400);
      expect((await register({ redirect_uris: [`http://127.0.0.1:4000/${'a'.repeat(600)}`] })).status).toBe(400);
      expect((await register({ redirect_uris: [LOOPBACK], client_name: 'n'.repeat(101) })).status).toBe(400);
      expect((await register({ redirect_uris: [LOOPBACK], client_name: 'line\nbreak' })).status).toBe(400);
      expect((await register(undefined, JSON.stringify({ redirect_uris: [LOOPBACK], padding: 'p'.repeat(5000) }))).status).toBe(413);
    });

    it('limits registrations per address: past the hourly limit, 429 with Retry-After, while other addresses go on', async () => {
      const address = '198.51.100.80';
      const register = (from_: string) =>
        from(from_)(found.server.registration_endpoint!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: [LOOPBACK] }) });
      for (let i = 0; i < t.registrationsPerHour; i++) expect((await register(address)).status).toBe(201);
      const refused = await register(address);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
      expect(field(await refused.text(), 'error')).toBe('temporarily_unavailable');
      expect((await register('198.51.100.81')).status).toBe(201);
      expect(logged('oauth_throttled').some((line) => line.includes('"route":"register"') && line.includes('"security_event":"throttle"'))).toBe(true);
    });

    it('meters wrong keys on the consent form per address: past ten, even the right key waits, with Retry-After; other addresses go on', async () => {
      const guesser = '198.51.100.90';
      const { authorizationUrl } = await startAuthorization(found.issuer, { metadata: found.server, clientInformation: client, redirectUrl: LOOPBACK, resource: new URL(t.mcpUrl) });
      const consent = await openConsent(from(guesser), authorizationUrl);
      for (let i = 0; i < 10; i++) {
        const wrong = await submitConsent(from(guesser), consent, `kb_live_${randomBytes(32).toString('base64url').slice(0, 43)}`);
        expect(wrong.status).toBe(401);
      }
      const throttled = await submitConsent(from(guesser), consent, key.key);
      expect(throttled.status).toBe(429);
      expect(throttled.headers.get('location')).toBeNull();
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      const elsewhere = await openConsent(from('198.51.100.91'), authorizationUrl);
      expect((await submitConsent(from('198.51.100.91'), elsewhere, key.key)).status).toBe(302);
      expect(logged('oauth_consent_refused').filter((line) => line.includes('"security_event":"consent_failure"')).length).toBeGreaterThanOrEqual(10);
      expect(logged('oauth_throttled').some((line) => line.includes('"route":"consent"'))).toBe(true);
    });

    it('meters refused grants at the token endpoint per address: past 60 in an hour, 429 with Retry-After; other addresses go on', async () => {
      const guesser = '198.51.100.95';
      const guess = () => token({ grant_type: 'refresh_token', refresh_token: `kb_rt_${randomBytes(32).toString('base64url')}` }, guesser);
      for (let i = 0; i < 60; i++) expect((await guess()).status).toBe(400);
      const refused = await from(guesser)(found.server.token_endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: client.client_id, grant_type: 'refresh_token', refresh_token: 'kb_rt_x' }),
      });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await token({ grant_type: 'refresh_token', refresh_token: 'kb_rt_unknown' }, '198.51.100.96')).status).toBe(400);
      expect(logged('oauth_throttled').some((line) => line.includes('"route":"token"'))).toBe(true);
    });

    it('holds at most the configured number of unused registrations: then 503 with Retry-After, until a consent confirms one', async () => {
      const register = (address: string) =>
        from(address)(found.server.registration_endpoint!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: [LOOPBACK] }) });
      const accepted: OAuthClientInformationFull[] = [];
      let full: Response | undefined;
      for (let i = 0; i <= t.pendingClientsMax && !full; i++) {
        const response = await register(`198.51.100.${100 + i}`);
        if (response.status === 201) accepted.push((await response.json()) as OAuthClientInformationFull);
        else full = response;
      }
      expect(accepted.length).toBeGreaterThan(0);
      expect(full?.status).toBe(503);
      expect(Number(full!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await full!.text()).toMatch(/unused client registrations/);
      expect(logged('oauth_registration_cap').length).toBeGreaterThan(0);
      // A consent confirms one of them, which frees its place.
      await authorize(from(), found, accepted[0]!, LOOPBACK, key.key);
      expect((await register('198.51.100.200')).status).toBe(201);
      expect((await register('198.51.100.201')).status).toBe(503);
    });

    it('answers 400 seeded malformed requests across every OAuth endpoint without a 5xx or a stack trace', async () => {
      const random = seededRandom(20_261_201);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const junk = () => pick(['', 'x', '%', '%zz', '\u0000', '\ud800', 'a'.repeat(3000), '{"a":', '[]', 'null', '../../etc/passwd', "' OR 1=1 --", '<script>', randomBytes(12).toString('base64url')]);
      const params = () => {
        const form = new URLSearchParams();
        const names = ['client_id', 'grant_type', 'code', 'code_verifier', 'redirect_uri', 'refresh_token', 'resource', 'response_type', 'code_challenge', 'code_challenge_method', 'state', 'csrf', 'api_key', 'decision'];
        for (let i = 0; i < 1 + Math.floor(random() * 6); i++) {
          const name = pick(names);
          const value = pick([junk(), client.client_id, 'authorization_code', 'refresh_token', 'S256', 'code', LOOPBACK, `kb_code_${junk()}`, `kb_rt_${junk()}`, `kb_live_${'z'.repeat(43)}`]);
          form.append(name, value);
        }
        return form;
      };
      const paths = ['/oauth/authorize', '/oauth/token', '/oauth/register', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'];
      const base = new URL(found.issuer);
      for (let i = 0; i < 400; i++) {
        const method = pick(['GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'OPTIONS']);
        const url = new URL(`${base.pathname.replace(/\/$/, '')}${pick(paths)}`, base);
        const body = method === 'GET' || method === 'OPTIONS' ? undefined : pick([params().toString(), JSON.stringify({ redirect_uris: [junk()], client_name: junk() }), junk(), JSON.stringify(params())]);
        if (method === 'GET') url.search = params().toString();
        const type = pick(['application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', '']);
        const response = await from(`192.0.2.${i % 200}`)(url, { method, redirect: 'manual', headers: type ? { 'Content-Type': type } : {}, body });
        const text = await response.text();
        expect(response.status, `${method} ${url.pathname}`).toBeLessThan(500);
        expect(text).not.toMatch(/\n\s+at |node_modules|SELECT |INSERT INTO/);
      }
    });

    it('logs every OAuth request and each security event, and never a key, code or token', () => {
      const requests = logged('oauth_request');
      for (const path of ['/oauth/register', '/oauth/authorize', '/oauth/token', '/.well-known/oauth-authorization-server']) {
        expect(requests.some((line) => line.includes(`"path":"${path}"`)), path).toBe(true);
      }
      expect(logged('oauth_invalid_grant').length).toBeGreaterThan(0);
      const all = t.logs().join('\n');
      expect(all).not.toMatch(/kb_(live|code|rt|at|client)_[A-Za-z0-9_-]{20}/);
      expect(all).not.toContain(key.key);
    });
  });
}
