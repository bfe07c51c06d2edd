/**
 * Who may ask for a grant, and where the answer may go.
 *
 * Two kinds of client, both public (PKCE, no secret):
 * - registered dynamically (RFC 7591): `register` checks the metadata, issues a
 *   random client id and stores only its keyed hash with the redirect URIs;
 * - identified by a Client ID Metadata Document: the client id is an `https` URL
 *   whose JSON document (fetched bounded, timed, without redirects) names the
 *   client and its redirect URIs. Nothing about such a client is stored.
 *
 * Either way every redirect URI must be allowed (`redirect-uris.ts`): a loopback
 * `http` URL (any port, for desktop clients, as RFC 8252 asks) or an entry of the
 * configured allow-list (`CHATCTX_OAUTH_REDIRECT_ALLOWLIST`; a last segment `/*`
 * allows any path below it), each parsed and matched exactly, never as a raw prefix.
 */
import { readBounded } from '../streams/bounded-read.ts';
import { hashOAuthSecret, newSecret } from './oauth-crypto.ts';
import { LOOPBACK_HOSTS, redirectAllowed } from './redirect-uris.ts';
import type { OAuthStore } from './oauth-store.ts';

/** A client as the authorization and token endpoints see it. */
export interface OAuthClient {
  readonly clientId: string;
  readonly clientHash: string;
  readonly name: string | undefined;
  readonly redirectUris: readonly string[];
}

export interface ClientDirectoryOptions {
  readonly store: OAuthStore;
  readonly pepper: () => Promise<Buffer>;
  readonly redirectAllowlist: readonly string[];
  /** Fetches metadata documents; tests serve theirs through it. @default fetch */
  readonly fetch?: typeof fetch;
  /** How long a metadata document fetch may take. @default 5000 */
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

const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
const REGISTRATION_DAYS = 365;
const MAX_REDIRECT_URIS = 10;

export class ClientDirectory {
  constructor(private readonly options: ClientDirectoryOptions) {}

  /** Registers a client from RFC 7591 metadata; returns the registration response body. */
  async register(metadata: unknown): Promise<Record<string, unknown>> {
    if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) throw new ClientError('invalid_client_metadata', 'The body must be a JSON object.');
    const m = metadata as Record<string, unknown>;
    const redirectUris = this.checkRedirectUris(m.redirect_uris);
    const method = m.token_endpoint_auth_method ?? 'none';
    if (method !== 'none') throw new ClientError('invalid_client_metadata', 'Only public clients (token_endpoint_auth_method "none", with PKCE) are supported.');
    const grants = m.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      throw new ClientError('invalid_client_metadata', 'grant_types may name authorization_code and refresh_token only.');
    }
    const name = typeof m.client_name === 'string' ? m.client_name.slice(0, 200) : undefined;
    const clientId = newSecret('kb_client_');
    const now = this.options.now();
    const clientHash = hashOAuthSecret(await this.options.pepper(), 'client', clientId);
    await this.options.store.addClient(clientHash, { clientName: name ?? null, redirectUris }, now, new Date(now.getTime() + REGISTRATION_DAYS * 86_400_000));
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

  /** The client with this id, or a `ClientError` saying why there is none. */
  async find(clientId: string): Promise<OAuthClient> {
    const clientHash = hashOAuthSecret(await this.options.pepper(), 'client', clientId);
    if (clientId.startsWith('https://')) return { ...(await this.fromMetadataDocument(clientId)), clientId, clientHash };
    const stored = clientId.startsWith('kb_client_') ? await this.options.store.client(clientHash, this.options.now()) : undefined;
    if (!stored) throw new ClientError('invalid_client', 'The client is not registered (or its registration expired); register again.');
    return { clientId, clientHash, name: stored.clientName ?? undefined, redirectUris: stored.redirectUris };
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
    return value;
  }

  private async fromMetadataDocument(clientId: string): Promise<{ name: string | undefined; redirectUris: string[] }> {
    if (!isMetadataDocumentUrl(clientId)) throw new ClientError('invalid_client', 'A URL client id must be an https URL with a path, naming a public host.');
    let document: Record<string, unknown>;
    try {
      const response = await (this.options.fetch ?? fetch)(clientId, {
        headers: { Accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.fetchTimeoutMs ?? 5000),
      });
      const bytes = response.ok ? await readBounded(response.body, METADATA_DOCUMENT_MAX_BYTES) : undefined;
      if (!bytes) throw new Error('unreadable');
      document = JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch {
      throw new ClientError('invalid_client', 'The client metadata document could not be fetched as JSON (https, 200, at most 5 KiB).');
    }
    if (!document || typeof document !== 'object' || document.client_id !== clientId) {
      throw new ClientError('invalid_client', 'The client metadata document must name its own URL as client_id.');
    }
    const method = document.token_endpoint_auth_method ?? 'none';
    if (method !== 'none') throw new ClientError('invalid_client', 'Only public clients (token_endpoint_auth_method "none") are supported.');
    const redirectUris = this.checkRedirectUris(document.redirect_uris);
    return { name: typeof document.client_name === 'string' ? document.client_name.slice(0, 200) : undefined, redirectUris };
  }
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
