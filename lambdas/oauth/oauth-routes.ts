/**
 * chatctx's own small OAuth 2.1 authorization server, for connector clients that
 * cannot send a static API key, as a fetch-style function: a `Request` for one of
 * its paths in, a `Response` out. Both runtimes mount it beside the MCP endpoint,
 * under the same base URL, through the front door.
 *
 *   GET  /.well-known/oauth-protected-resource[/mcp]  RFC 9728 metadata of the MCP endpoint
 *   GET  /.well-known/oauth-authorization-server      RFC 8414 metadata of the authorization server
 *   GET  /oauth/authorize   the consent page; POST it with an API key → redirect with a code
 *   POST /oauth/token       authorization_code (PKCE S256) and refresh_token (rotated)
 *   POST /oauth/register    dynamic client registration (RFC 7591)
 *
 * A grant stands for the API key a person pasted: the access token it yields is
 * signed, lasts an hour, names the key's id, its token family and the MCP resource
 * URL, and is checked on each tool call like the key itself
 * (`access-token-resolver.ts`). It does not authenticate MCP requests and knows
 * nothing of tool quotas.
 *
 * Against replay (RFC 9700 §4.14, RFC 6749 §4.1.2): everything issued from one
 * code is a family; a refresh token or a code used a second time revokes its
 * family, so whoever holds a stolen token loses it the moment either side uses
 * the old one. Against guessing and flooding: the consent form counts wrong keys
 * per caller address and makes the address wait (an hour, then the rest of the
 * day); registration and metadata document fetches are throttled per address
 * (`oauth-clients.ts`). The front door (`protocol/endpoint.ts`) logs every request
 * (`oauth_request`: path, method, status, duration) and catches failures; every refusal that matters for security is a log line
 * with a `security_event` field (never a token, key or code), which the stack
 * counts in a metric.
 */
import { createHash } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../ports/logger.ts';
import type { QuotaStore } from '../ports/quota-store.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Sql } from '../ports/sql.ts';
import { AddressThrottle, type ThrottleRule } from '../quota/address-throttle.ts';
import { UntrustedFetcher } from '../streams/untrusted-fetch.ts';
import type { KeyResolver } from '../auth/bearer.ts';
import { isWellFormedApiKey } from '../auth/api-keys.ts';
import { readBounded } from '../streams/bounded-read.ts';
import { ClientDirectory, ClientError, ClientLimitError, type OAuthClient } from './oauth-clients.ts';
import { OAuthStore, type Grant } from './oauth-store.ts';
import { redirectMatches } from './redirect-uris.ts';
import { hashOAuthSecret } from '../privacy/hashing.ts';
import { newSecret, signAccessToken } from './oauth-crypto.ts';
import { AUTHORIZE_PARAMS, PAGE_HEADERS, consentPage, csrfCookieHeader, csrfValid, errorPage, newCsrf } from './consent-page.ts';

export interface OAuthRoutesDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  /** Checks the API key pasted on the consent page, exactly as bearer auth checks one. */
  readonly keys: KeyResolver;
  /** Redirect URIs allowed besides loopback ones (`CHATCTX_OAUTH_REDIRECT_ALLOWLIST`). */
  readonly redirectAllowlist: readonly string[];
  readonly logger: Logger;
  /** Counts the per-address limits (registrations, consent failures, document fetches). */
  readonly quota: QuotaStore;
  /** Registrations per caller address per hour (`CHATCTX_OAUTH_REGISTRATIONS_PER_HOUR`). */
  readonly registrationsPerHour: number;
  /** Registrations per hour from all addresses together. */
  readonly registrationsTotalPerHour: number;
  /** Unconfirmed registrations held at most (`CHATCTX_OAUTH_PENDING_CLIENTS_MAX`). */
  readonly pendingClientsMax: number;
  /** Fetches client metadata documents. @default public addresses through the system resolver */
  readonly fetcher?: UntrustedFetcher;
  /** Called when a token family is revoked, so cached access-token lookups are dropped. */
  readonly onRevoked?: () => void;
  readonly now?: () => Date;
  /** Path of the MCP endpoint under the base URL. @default '/mcp' */
  readonly mcpPath?: string;
}

/**
 * The OAuth endpoints as the front door (`protocol/endpoint.ts`) mounts them:
 * `baseUrl` is the public URL the paths hang from (the server's origin, or the API
 * stage's URL); `clientIp` is the caller's address, for the per-address limits.
 */
export interface OAuthRoutes {
  /** Whether `path` is one of these endpoints. */
  owns(path: string): boolean;
  answer(request: Request, baseUrl: string, clientIp: string): Promise<Response>;
  /**
   * The answer to a request on `path` that failed: 503 with `Retry-After` when the
   * store is not ready yet, else 500, neither saying more; the consent page answers
   * as a page, the other endpoints as OAuth error JSON (RFC 6749 §5.2).
   */
  failure(path: string, retryAfter: number | undefined): Response;
}

/** Access tokens last an hour: a revoked key's connector stops within that time at most (sooner, by the key cache). */
export const ACCESS_TOKEN_SECONDS = 3600;
const CODE_SECONDS = 300;
const REFRESH_TOKEN_DAYS = 30;
const BODY_MAX_BYTES = 16 * 1024;
const PKCE_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;
/** Registration bodies: 5 redirect URIs of 512 characters and a name fit with room to spare. */
const REGISTRATION_MAX_BYTES = 4 * 1024;
/** Wrong keys on the consent form per caller address: then the rest of the hour, then of the day. */
const CONSENT_FAILURE_RULE: ThrottleRule = { name: 'consent', perHour: 10, perDay: 30 };
/** Refused token requests per caller address: a client that keeps presenting bad grants waits. */
const GRANT_FAILURE_RULE: ThrottleRule = { name: 'grant', perHour: 60, perDay: 200 };

/** Where the protected resource metadata of the MCP endpoint lives (RFC 9728, path-suffixed). */
export function resourceMetadataUrl(baseUrl: string, mcpPath = '/mcp'): string {
  return `${baseUrl}/.well-known/oauth-protected-resource${mcpPath}`;
}

type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'temporarily_unavailable'
  | 'server_error';

export function createOAuthRoutes(deps: OAuthRoutesDeps): OAuthRoutes {
  return new OAuthServer(deps);
}

type Caller = { readonly base: string; readonly ip: string };
type Route = { readonly methods: readonly string[]; readonly cors: boolean; readonly answer: (request: Request, caller: Caller) => Promise<Response> };

class OAuthServer implements OAuthRoutes {
  private readonly now: () => Date;
  private readonly mcpPath: string;
  private readonly store: OAuthStore;
  private readonly clients: ClientDirectory;
  private readonly throttle: AddressThrottle;
  private readonly routes: Readonly<Record<string, Route>>;

  constructor(private readonly deps: OAuthRoutesDeps) {
    this.now = deps.now ?? (() => new Date());
    this.mcpPath = deps.mcpPath ?? '/mcp';
    this.store = new OAuthStore(deps.sql);
    this.throttle = new AddressThrottle(deps.quota, deps.secrets, this.now);
    this.clients = new ClientDirectory({
      store: this.store,
      secrets: deps.secrets,
      redirectAllowlist: deps.redirectAllowlist,
      fetcher: deps.fetcher ?? new UntrustedFetcher(),
      throttle: this.throttle,
      registrationsPerHour: deps.registrationsPerHour,
      registrationsTotalPerHour: deps.registrationsTotalPerHour,
      pendingClientsMax: deps.pendingClientsMax,
      logger: deps.logger,
      now: this.now,
    });
    const resource: Route = { methods: ['GET'], cors: true, answer: async (_r, { base }) => json(200, this.protectedResource(base)) };
    const server: Route = { methods: ['GET'], cors: true, answer: async (_r, { base }) => json(200, this.serverMetadata(base)) };
    this.routes = {
      '/.well-known/oauth-protected-resource': resource,
      [`/.well-known/oauth-protected-resource${this.mcpPath}`]: resource,
      '/.well-known/oauth-authorization-server': server,
      '/oauth/authorize': { methods: ['GET', 'POST'], cors: false, answer: (r, caller) => (r.method === 'GET' ? this.showConsent(r, caller) : this.decide(r, caller)) },
      '/oauth/token': { methods: ['POST'], cors: true, answer: (r, { ip }) => this.token(r, ip) },
      '/oauth/register': { methods: ['POST'], cors: true, answer: (r, caller) => this.register(r, caller) },
    };
  }

  owns(path: string): boolean {
    return Object.hasOwn(this.routes, path);
  }

  /** A path `owns` accepted; the front door catches what this throws and logs each request. */
  async answer(request: Request, baseUrl: string, clientIp: string): Promise<Response> {
    const route = this.routes[new URL(request.url).pathname]!;
    if (request.method === 'OPTIONS' && route.cors) return new Response(null, { status: 204, headers: corsHeaders() });
    if (!route.methods.includes(request.method)) return new Response(null, { status: 405, headers: { Allow: route.methods.join(', ') } });
    const response = await route.answer(request, { base: baseUrl, ip: clientIp });
    if (route.cors) for (const [name, value] of Object.entries(corsHeaders())) response.headers.set(name, value);
    return response;
  }

  failure(path: string, retryAfter: number | undefined): Response {
    const message = retryAfter === undefined ? 'Internal error; nothing was changed. Try again later.' : `The service is starting; try again in ${retryAfter} seconds.`;
    const status = retryAfter === undefined ? 500 : 503;
    const response =
      path === '/oauth/authorize' ? page(status, errorPage(message)) : json(status, { error: retryAfter === undefined ? 'server_error' : 'temporarily_unavailable', error_description: message });
    if (retryAfter !== undefined) response.headers.set('Retry-After', String(retryAfter));
    // A browser-based client reads the failure like any other answer of a CORS route.
    if (this.routes[path]?.cors) for (const [name, value] of Object.entries(corsHeaders())) response.headers.set(name, value);
    return response;
  }

  private pepper(): Promise<Buffer> {
    return this.deps.secrets.pepper();
  }

  private protectedResource(base: string) {
    return { resource: `${base}${this.mcpPath}`, authorization_servers: [base], bearer_methods_supported: ['header'], resource_name: 'chatctx' };
  }

  private serverMetadata(base: string) {
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: [],
    };
  }

  /** The checked authorization request, or the page/redirect that refuses it. */
  private async authorizationRequest(params: URLSearchParams, { base, ip }: Caller): Promise<AuthorizationRequest | Response> {
    const clientId = params.get('client_id');
    if (!clientId) return page(400, errorPage('The request names no client_id.'));
    let client: OAuthClient;
    try {
      client = await this.clients.find(clientId, ip);
    } catch (error) {
      if (error instanceof ClientError) return page(400, errorPage(error.message));
      throw error;
    }
    const redirectUri = params.get('redirect_uri') ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : '');
    if (!client.redirectUris.some((registered) => redirectMatches(registered, redirectUri)) || !this.clients.redirectAllowed(redirectUri)) {
      return page(400, errorPage('The redirect_uri is not one this client registered, or not on this server\'s allow-list.'));
    }
    const back = (error: string, description: string) => redirect(redirectUri, { error, error_description: description, state: params.get('state'), iss: base });
    if (params.get('response_type') !== 'code') return back('unsupported_response_type', 'Only response_type=code is supported.');
    const challenge = params.get('code_challenge') ?? '';
    if (params.get('code_challenge_method') !== 'S256' || !PKCE_PATTERN.test(challenge)) {
      return back('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
    }
    const resource = params.get('resource') ?? `${base}${this.mcpPath}`;
    if (resource !== `${base}${this.mcpPath}`) return back('invalid_target', `The only resource here is ${base}${this.mcpPath}.`);
    return { client, redirectUri, redirectUriGiven: params.has('redirect_uri'), challenge, resource, state: params.get('state') };
  }

  private async showConsent(request: Request, caller: Caller): Promise<Response> {
    const params = new URL(request.url).searchParams;
    const checked = await this.authorizationRequest(params, caller);
    if (checked instanceof Response) return checked;
    return this.consent(checked, params, caller.base, 200);
  }

  private async consent(checked: AuthorizationRequest, params: URLSearchParams, base: string, status: number, error?: string): Promise<Response> {
    const csrf = newCsrf(await this.pepper(), this.now().getTime());
    const carried = Object.fromEntries(AUTHORIZE_PARAMS.flatMap((name) => (params.has(name) ? [[name, params.get(name)!]] : [])));
    const html = consentPage({ clientName: checked.client.name ?? checked.client.clientId, redirectHost: new URL(checked.redirectUri).host, params: carried, error }, csrf.token);
    const response = page(status, html);
    response.headers.append('Set-Cookie', csrfCookieHeader(csrf.cookie, base.startsWith('https:')));
    return response;
  }

  private async decide(request: Request, caller: Caller): Promise<Response> {
    const { base, ip } = caller;
    const form = await readForm(request);
    if (!form) return page(400, errorPage('Send the consent form as application/x-www-form-urlencoded, at most 16 KiB.'));
    // Checked before anything else is looked up: a throttled address costs one counter read.
    const throttled = await this.throttle.blocked(CONSENT_FAILURE_RULE, ip);
    if (throttled) {
      this.deps.logger.warn('oauth_throttled', { route: 'consent', security_event: 'throttle' });
      const response = page(429, errorPage('Too many wrong API keys were entered from this address. Wait before trying again.'));
      response.headers.set('Retry-After', String(throttled.retryAfterSeconds));
      return response;
    }
    const checked = await this.authorizationRequest(form, caller);
    if (checked instanceof Response) return checked;
    if (!csrfValid(await this.pepper(), request.headers.get('cookie'), form.get('csrf') ?? undefined, this.now().getTime())) {
      this.deps.logger.warn('oauth_consent_refused', { reason: 'csrf', security_event: 'csrf' });
      return page(403, errorPage('The consent form expired or was not sent from this page. Start the connection again from your client.'));
    }
    if (form.get('decision') === 'deny') return redirect(checked.redirectUri, { error: 'access_denied', state: checked.state, iss: base });
    const apiKey = (form.get('api_key') ?? '').trim();
    const key = isWellFormedApiKey(apiKey) ? await this.deps.keys.resolve(apiKey) : undefined;
    if (!key) {
      await this.throttle.count(CONSENT_FAILURE_RULE, ip);
      this.deps.logger.warn('oauth_consent_refused', { reason: isWellFormedApiKey(apiKey) ? 'invalid' : 'malformed', security_event: 'consent_failure' });
      return this.consent(checked, form, base, 401, 'That is not an active chatctx API key. Check it and try again.');
    }
    await this.clients.confirm(checked.client);
    const code = newSecret('kb_code_');
    const at = this.now();
    const stored = {
      clientHash: checked.client.clientHash,
      apiKeyId: key.id,
      redirectUri: checked.redirectUri,
      redirectUriGiven: checked.redirectUriGiven,
      codeChallenge: checked.challenge,
      resource: checked.resource,
      familyId: randomUUID(),
    };
    await this.store.addCode(hashOAuthSecret(await this.pepper(), 'code', code), stored, at, new Date(at.getTime() + CODE_SECONDS * 1000));
    this.deps.logger.info('oauth_code_issued', {});
    return redirect(checked.redirectUri, { code, state: checked.state, iss: base });
  }

  /** The token endpoint, with refused grants metered per address like wrong keys on the consent form. */
  private async token(request: Request, ip: string): Promise<Response> {
    const throttled = await this.throttle.blocked(GRANT_FAILURE_RULE, ip);
    if (throttled) {
      this.deps.logger.warn('oauth_throttled', { route: 'token', security_event: 'throttle' });
      const response = oauthError(429, 'temporarily_unavailable', 'Too many refused grants from this address; try again after Retry-After.');
      response.headers.set('Retry-After', String(throttled.retryAfterSeconds));
      return response;
    }
    const response = await this.grant(request);
    if (response.status === 400) await this.throttle.count(GRANT_FAILURE_RULE, ip);
    return response;
  }

  private async grant(request: Request): Promise<Response> {
    const form = await readForm(request);
    if (!form) return oauthError(400, 'invalid_request', 'Send the token request as application/x-www-form-urlencoded.');
    const clientId = form.get('client_id');
    if (!clientId) return oauthError(401, 'invalid_client', 'Public clients send their client_id.');
    const clientHash = hashOAuthSecret(await this.pepper(), 'client', clientId);
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') return this.exchangeCode(form, clientHash);
    if (grantType === 'refresh_token') return this.refresh(form, clientHash);
    return oauthError(400, 'unsupported_grant_type', 'Use authorization_code or refresh_token.');
  }

  private async exchangeCode(form: URLSearchParams, clientHash: string): Promise<Response> {
    const code = form.get('code');
    const verifier = form.get('code_verifier') ?? '';
    if (!code || !PKCE_PATTERN.test(verifier)) return oauthError(400, 'invalid_request', 'Send code and a code_verifier of 43 to 128 characters.');
    const taken = await this.store.takeCode(hashOAuthSecret(await this.pepper(), 'code', code), this.now());
    if (taken?.use === 'replayed') return this.replayed('authorization_code', taken);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const redirectUri = form.get('redirect_uri');
    // RFC 6749 §4.1.3: the token request repeats redirect_uri exactly when the authorization request named it.
    const redirectMatches = taken && (taken.redirectUriGiven ? redirectUri === taken.redirectUri : redirectUri === null || redirectUri === taken.redirectUri);
    if (!taken || taken.use !== 'first' || taken.clientHash !== clientHash || !redirectMatches || taken.codeChallenge !== challenge || !taken.keyActive) {
      return this.invalidGrant('authorization_code', 'The code is unknown, used, expired, issued to another client or redirect URI, or the verifier does not match.');
    }
    if (form.has('resource') && form.get('resource') !== taken.resource) return oauthError(400, 'invalid_target', 'The resource differs from the one authorized.');
    return this.issue(taken, 'authorization_code');
  }

  private async refresh(form: URLSearchParams, clientHash: string): Promise<Response> {
    const presented = form.get('refresh_token');
    if (!presented) return oauthError(400, 'invalid_request', 'Send refresh_token.');
    const taken = await this.store.takeRefreshToken(hashOAuthSecret(await this.pepper(), 'refresh', presented), this.now());
    if (taken?.use === 'replayed') return this.replayed('refresh_token', taken);
    if (!taken || taken.use !== 'first' || taken.clientHash !== clientHash || !taken.keyActive) {
      return this.invalidGrant('refresh_token', 'The refresh token is unknown, already used, expired, issued to another client, or its API key was revoked.');
    }
    if (form.has('resource') && form.get('resource') !== taken.resource) return oauthError(400, 'invalid_target', 'The resource differs from the one authorized.');
    return this.issue(taken, 'refresh_token');
  }

  /** A code or refresh token used twice: one of the two users stole it, so neither keeps what it issued. */
  private async replayed(grantType: string, grant: Grant): Promise<Response> {
    const at = this.now();
    await this.store.revokeFamily(grant, at, new Date(at.getTime() + REFRESH_TOKEN_DAYS * 86_400_000));
    this.deps.onRevoked?.();
    this.deps.logger.warn('oauth_token_reuse', { grant_type: grantType, family_revoked: true, security_event: 'token_reuse' });
    return oauthError(400, 'invalid_grant', 'This grant was already used; everything issued from it is revoked. Connect again.');
  }

  private invalidGrant(grantType: string, description: string): Response {
    this.deps.logger.warn('oauth_invalid_grant', { grant_type: grantType, security_event: 'invalid_grant' });
    return oauthError(400, 'invalid_grant', description);
  }

  private async issue(grant: Grant, grantType: string): Promise<Response> {
    const at = this.now();
    const secret = await this.pepper();
    const accessToken = signAccessToken(secret, {
      keyId: grant.apiKeyId,
      audience: grant.resource,
      clientHash: grant.clientHash,
      expiresAt: Math.floor(at.getTime() / 1000) + ACCESS_TOKEN_SECONDS,
      familyId: grant.familyId,
    });
    const refreshToken = newSecret('kb_rt_');
    const stored = await this.store.addRefreshToken(hashOAuthSecret(secret, 'refresh', refreshToken), grant, at, new Date(at.getTime() + REFRESH_TOKEN_DAYS * 86_400_000));
    // Revoked between taking the old token and storing the new one (a replay raced this request).
    if (!stored) return this.invalidGrant(grantType, 'This grant was revoked. Connect again.');
    this.deps.logger.info('oauth_token_issued', { grant_type: grantType });
    return json(200, { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refreshToken });
  }

  private async register(request: Request, { ip }: Caller): Promise<Response> {
    const bytes = await readBounded(request.body, REGISTRATION_MAX_BYTES);
    if (!bytes) return oauthError(413, 'invalid_client_metadata', `A registration is at most ${REGISTRATION_MAX_BYTES / 1024} KiB.`);
    let metadata: unknown;
    try {
      metadata = JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch {
      metadata = undefined;
    }
    try {
      const registered = await this.clients.register(metadata, ip);
      this.deps.logger.info('oauth_client_registered', {});
      return json(201, registered);
    } catch (error) {
      if (error instanceof ClientError) return oauthError(400, error.code === 'invalid_client' ? 'invalid_client_metadata' : error.code, error.message);
      if (error instanceof ClientLimitError) {
        const response = oauthError(error.status, 'temporarily_unavailable', error.message);
        response.headers.set('Retry-After', String(error.retryAfterSeconds));
        return response;
      }
      throw error;
    }
  }
}

interface AuthorizationRequest {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  readonly redirectUriGiven: boolean;
  readonly challenge: string;
  readonly resource: string;
  readonly state: string | null;
}

async function readForm(request: Request): Promise<URLSearchParams | undefined> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return undefined;
  const bytes = await readBounded(request.body, BODY_MAX_BYTES);
  return bytes ? new URLSearchParams(Buffer.from(bytes).toString('utf8')) : undefined;
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } });
}

function oauthError(status: number, error: OAuthErrorCode, description: string): Response {
  return json(status, { error, error_description: description });
}

function page(status: number, html: string): Response {
  // A fresh object each time: a runtime may add Content-Length to the headers object it is given.
  return new Response(html, { status, headers: { ...PAGE_HEADERS } });
}

function redirect(to: string, params: Record<string, string | null>): Response {
  const url = new URL(to);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return new Response(null, { status: 302, headers: { Location: url.toString(), 'Cache-Control': 'no-store' } });
}

function corsHeaders(): Record<string, string> {
  // No cookies or credentials cross here, so any origin may read these answers (browser-based clients discover and exchange here).
  return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS', 'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version' };
}
