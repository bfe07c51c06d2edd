/**
 * Who may ask for a grant, and where the answer may go.
 *
 * Two kinds of client, both public (PKCE, no secret):
 * - registered dynamically (RFC 7591): `register` checks the metadata, issues a
 *   random client id and stores only its keyed hash with the redirect URIs;
 * - identified by a Client ID Metadata Document: the client id is an `https` URL
 *   whose JSON document names the client and its redirect URIs. It is fetched
 *   through the untrusted fetcher (`streams/untrusted-fetch.ts`: public addresses
 *   only, a hard deadline, 5 KiB, no redirects), kept in memory as long as its
 *   HTTP caching headers allow (at most a day), fetched at most so often per
 *   caller address, and refused with one message whatever went wrong, so a caller
 *   cannot tell an unreachable host from a wrong document. Nothing about such a
 *   client is stored.
 *
 * Registration cannot be flooded: a caller address may register only so many
 * clients an hour and a day (`AddressThrottle`); a registration lives a day until
 * someone consents to it (then its full year), and the store holds at most so many
 * unconfirmed ones; a registration carries at most 5 redirect URIs of at most 512
 * characters and a name of at most 100.
 *
 * Either way every redirect URI must be allowed (`redirect-uris.ts`): a loopback
 * `http` URL (any port, for desktop clients, as RFC 8252 asks) or an entry of the
 * configured allow-list (`CHATCTX_OAUTH_REDIRECT_ALLOWLIST`; a last segment `/*`
 * allows any path below it), each parsed and matched exactly, never as a raw prefix.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../ports/logger.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { AddressThrottle, ThrottleRule } from '../quota/address-throttle.ts';
import { UntrustedFetchError, type UntrustedFetcher } from '../streams/untrusted-fetch.ts';
import { hashOAuthSecret } from '../privacy/hashing.ts';
import { newSecret } from './oauth-crypto.ts';
import { LOOPBACK_HOSTS, redirectAllowed } from './redirect-uris.ts';
import type { OAuthStore } from './oauth-store.ts';

/** A client as the authorization and token endpoints see it. */
export interface OAuthClient {
  readonly clientId: string;
  readonly clientHash: string;
  readonly name: string | undefined;
  readonly redirectUris: readonly string[];
  /** Registered here (and confirmed on first consent), rather than described by a metadata document. */
  readonly registered: boolean;
}

export interface ClientDirectoryOptions {
  readonly store: OAuthStore;
  /** The pepper, through its port: the adapter decides caching and refresh. */
  readonly secrets: Secrets;
  readonly redirectAllowlist: readonly string[];
  /** Fetches metadata documents. */
  readonly fetcher: UntrustedFetcher;
  readonly throttle: AddressThrottle;
  /** Registrations per caller address per hour (five times that per day). */
  readonly registrationsPerHour: number;
  /** Registrations per hour from all addresses together (24 times that a day). */
  readonly registrationsTotalPerHour: number;
  /** Unconfirmed registrations the store holds at most. */
  readonly pendingClientsMax: number;
  readonly logger: Logger;
  /** How long a metadata document fetch may take, body included. @default 5000 */
  readonly fetchTimeoutMs?: number;
  readonly now: () => Date;
}

/** A refused registration or client, with the RFC 7591 / RFC 6749 error code. */
export class ClientError extends Error {
  constructor(
    readonly code: 'invalid_redirect_uri' | 'invalid_client_metadata' | 'invalid_client',
    message: string,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

/** Refused for now (a rate or a cap): the status and `Retry-After` to answer with. */
export class ClientLimitError extends Error {
  constructor(
    readonly status: 429 | 503,
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
    this.name = 'ClientLimitError';
  }
}

const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
const REGISTRATION_DAYS = 365;
/** An unconfirmed registration's life: long enough to finish connecting, short enough that floods drain. */
export const PENDING_REGISTRATION_HOURS = 24;
const MAX_REDIRECT_URIS = 5;
const MAX_CLIENT_NAME = 100;
/** Metadata documents kept at most this long, and this many at most (the oldest go first). */
const DOCUMENT_CACHE_MAX_SECONDS = 86_400;
const DOCUMENT_CACHE_DEFAULT_SECONDS = 300;
const DOCUMENT_CACHE_ENTRIES = 500;
/** Outbound metadata fetches (cache misses) per caller address. */
const METADATA_FETCH_RULE: ThrottleRule = { name: 'metadata', perHour: 30, perDay: 150 };
/** What an unauthenticated caller is told about any metadata document problem. */
const DOCUMENT_REFUSED = 'The client metadata document could not be used (it must be served over https from a public host as JSON, at most 5 KiB, naming its own URL as client_id, with redirect URIs this server allows).';

type Described = { name: string | undefined; redirectUris: string[] };

export class ClientDirectory {
  private readonly documents = new Map<string, { described: Described; until: number }>();

  constructor(private readonly options: ClientDirectoryOptions) {}

  /** Registers a client from RFC 7591 metadata for the caller at `address`; returns the registration response body. */
  async register(metadata: unknown, address: string): Promise<Record<string, unknown>> {
    if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) throw new ClientError('invalid_client_metadata', 'The body must be a JSON object.');
    const m = metadata as Record<string, unknown>;
    const redirectUris = this.checkRedirectUris(m.redirect_uris);
    const method = m.token_endpoint_auth_method ?? 'none';
    if (method !== 'none') throw new ClientError('invalid_client_metadata', 'Only public clients (token_endpoint_auth_method "none", with PKCE) are supported.');
    const grants = m.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      throw new ClientError('invalid_client_metadata', 'grant_types may name authorization_code and refresh_token only.');
    }
    const name = clientName(m.client_name, 'invalid_client_metadata');
    const perHour = this.options.registrationsPerHour;
    const throttled = await this.options.throttle.take({ name: 'register', perHour, perDay: perHour * 5 }, address);
    if (throttled) {
      this.options.logger.warn('oauth_throttled', { route: 'register', security_event: 'throttle' });
      throw new ClientLimitError(429, throttled.retryAfterSeconds, 'Too many registrations from this address; try again after Retry-After.');
    }
    // Then the server-wide count, still before the database: many addresses together cannot write (or wake) it more.
    const total = this.options.registrationsTotalPerHour;
    const full = await this.options.throttle.takeServerWide({ name: 'register', perHour: total, perDay: total * 24 });
    if (full) {
      this.options.logger.warn('oauth_registration_cap', { security_event: 'registration_cap', per_hour: total });
      throw new ClientLimitError(503, full.retryAfterSeconds, `This server accepts ${total} client registrations an hour from everyone together; try again after Retry-After.`);
    }
    const clientId = newSecret('kb_client_');
    const now = this.options.now();
    const clientHash = hashOAuthSecret(await this.options.secrets.pepper(), 'client', clientId);
    const pendingUntil = new Date(now.getTime() + PENDING_REGISTRATION_HOURS * 3_600_000);
    if (!(await this.options.store.addClient(clientHash, { clientName: name ?? null, redirectUris }, now, pendingUntil, this.options.pendingClientsMax))) {
      this.options.logger.warn('oauth_registration_cap', { security_event: 'registration_cap', pending_max: this.options.pendingClientsMax });
      throw new ClientLimitError(503, 3600, `This server holds as many unused client registrations as it allows (${this.options.pendingClientsMax}); unused ones expire ${PENDING_REGISTRATION_HOURS} h after registering. Try again later.`);
    }
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(now.getTime() / 1000),
      ...(name === undefined ? {} : { client_name: name }),
      redirect_uris: redirectUris,
      token_endpoint_auth_method: 'none',
      grant_types: grants,
      response_types: ['code'],
    };
  }

  /** The client with this id, or a `ClientError` saying why there is none; `address` is the caller's, for the fetch throttle. */
  async find(clientId: string, address: string): Promise<OAuthClient> {
    const clientHash = hashOAuthSecret(await this.options.secrets.pepper(), 'client', clientId);
    if (clientId.startsWith('https://')) return { ...(await this.fromMetadataDocument(clientId, address)), clientId, clientHash, registered: false };
    const stored = clientId.startsWith('kb_client_') ? await this.options.store.client(clientHash, this.options.now()) : undefined;
    if (!stored) throw new ClientError('invalid_client', 'The client is not registered (or its registration expired); register again.');
    return { clientId, clientHash, name: stored.clientName ?? undefined, redirectUris: stored.redirectUris, registered: true };
  }

  /** A registered client's first consent: it now lives its full life. */
  async confirm(client: OAuthClient): Promise<void> {
    if (!client.registered) return;
    const now = this.options.now();
    await this.options.store.confirmClient(client.clientHash, now, new Date(now.getTime() + REGISTRATION_DAYS * 86_400_000));
  }

  redirectAllowed(uri: string): boolean {
    return redirectAllowed(uri, this.options.redirectAllowlist);
  }

  private checkRedirectUris(value: unknown): string[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_REDIRECT_URIS || !value.every((v) => typeof v === 'string')) {
      throw new ClientError('invalid_redirect_uri', `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URLs.`);
    }
    const refused = value.find((uri) => !this.redirectAllowed(uri));
    if (refused !== undefined) throw new ClientError('invalid_redirect_uri', 'A redirect URI is not on this server\'s allow-list (loopback URLs and the configured connector callbacks).');
    return [...new Set(value)];
  }

  private async fromMetadataDocument(clientId: string, address: string): Promise<Described> {
    const cached = this.documents.get(clientId);
    const nowMs = this.options.now().getTime();
    if (cached && cached.until > nowMs) return cached.described;
    this.documents.delete(clientId);
    try {
      if (!isMetadataDocumentUrl(clientId)) throw new DocumentProblem('url');
      const throttled = await this.options.throttle.take(METADATA_FETCH_RULE, address);
      if (throttled) {
        this.options.logger.warn('oauth_throttled', { route: 'metadata_document', security_event: 'throttle' });
        throw new DocumentProblem('throttled');
      }
      const { described, maxAgeSeconds } = await this.fetchDocument(clientId);
      if (maxAgeSeconds > 0) this.remember(clientId, described, nowMs + maxAgeSeconds * 1000);
      return described;
    } catch (error) {
      if (!(error instanceof DocumentProblem)) throw error;
      if (error.reason !== 'throttled') {
        const event = error.reason === 'forbidden_address' ? 'oauth_ssrf_refused' : 'oauth_metadata_document_refused';
        this.options.logger.warn(event, { reason: error.reason, ...(error.reason === 'forbidden_address' ? { security_event: 'ssrf_refused' } : {}) });
      }
      throw new ClientError('invalid_client', DOCUMENT_REFUSED);
    }
  }

  private async fetchDocument(clientId: string): Promise<{ described: Described; maxAgeSeconds: number }> {
    let answer;
    try {
      answer = await this.options.fetcher.get(clientId, {
        deadlineMs: this.options.fetchTimeoutMs ?? 5000,
        maxBytes: METADATA_DOCUMENT_MAX_BYTES,
        headers: { accept: 'application/json', 'user-agent': 'chatctx-oauth' },
      });
    } catch (error) {
      throw new DocumentProblem(error instanceof UntrustedFetchError ? error.kind : 'network');
    }
    if (answer.status !== 200) throw new DocumentProblem('status');
    let document: Record<string, unknown>;
    try {
      document = JSON.parse(answer.body!.toString('utf8'));
    } catch {
      throw new DocumentProblem('not_json');
    }
    if (!document || typeof document !== 'object' || document.client_id !== clientId) throw new DocumentProblem('client_id');
    if ((document.token_endpoint_auth_method ?? 'none') !== 'none') throw new DocumentProblem('auth_method');
    let described: Described;
    try {
      described = { name: clientName(document.client_name, 'invalid_client'), redirectUris: this.checkRedirectUris(document.redirect_uris) };
    } catch {
      throw new DocumentProblem('redirect_uris');
    }
    return { described, maxAgeSeconds: cacheSeconds(answer.headers, this.options.now().getTime()) };
  }

  private remember(clientId: string, described: Described, until: number): void {
    if (this.documents.size >= DOCUMENT_CACHE_ENTRIES) this.documents.delete(this.documents.keys().next().value!);
    this.documents.set(clientId, { described, until });
  }
}

/** Why a metadata document was refused: for the operator's log only, never for the caller. */
class DocumentProblem extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** A client name: text of at most 100 characters without control characters, or none. */
function clientName(value: unknown, code: 'invalid_client_metadata' | 'invalid_client'): string | undefined {
  if (value === undefined || value === null) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length > MAX_CLIENT_NAME || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new ClientError(code, `client_name must be text of at most ${MAX_CLIENT_NAME} characters, without control characters.`);
  }
  return value.trim() || undefined;
}

/**
 * How long a metadata document may be reused, from its HTTP caching headers
 * (RFC 9111): not at all under `no-store` or `no-cache`; `max-age` less `Age`,
 * else until `Expires`, else five minutes; never more than a day.
 */
function cacheSeconds(headers: IncomingHttpHeaders, nowMs: number): number {
  const control = String(headers['cache-control'] ?? '').toLowerCase();
  if (/(^|[\s,])(no-store|no-cache)([\s,=]|$)/.test(control)) return 0;
  const maxAge = /(?:^|[\s,])max-age\s*=\s*"?(\d+)/.exec(control);
  let seconds = DOCUMENT_CACHE_DEFAULT_SECONDS;
  if (maxAge) {
    const age = Number(headers.age ?? 0);
    seconds = Number(maxAge[1]) - (Number.isFinite(age) ? age : 0);
  } else if (headers.expires !== undefined) {
    const expires = Date.parse(String(headers.expires));
    seconds = Number.isFinite(expires) ? Math.floor((expires - nowMs) / 1000) : 0;
  }
  return Math.max(0, Math.min(DOCUMENT_CACHE_MAX_SECONDS, seconds));
}

/** https, a path beyond `/`, no credentials or fragment, and a host name that is not loopback or an IP literal. */
function isMetadataDocumentUrl(value: string): boolean {
  const url = parseUrl(value);
  if (!url || url.protocol !== 'https:' || url.pathname === '/' || url.username || url.password || url.hash) return false;
  if (/(^|\/)\.\.?(\/|$)/.test(value.slice(url.origin.length))) return false;
  return !LOOPBACK_HOSTS.has(url.hostname) && !url.hostname.startsWith('[') && !/^[\d.]+$/.test(url.hostname) && url.hostname.includes('.');
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
