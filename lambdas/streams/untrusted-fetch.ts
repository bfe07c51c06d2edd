/**
 * The one way this service fetches a URL that someone else chose: a client
 * metadata document named by an unauthenticated caller (`oauth/oauth-clients.ts`),
 * a page an owner drafts a record from (`records/record-draft.ts`).
 *
 * What it guarantees, each because a weaker form was exploitable:
 * - https only, no credentials in the URL, one request per call: redirects are
 *   never followed here (a caller that follows them calls again for each hop, so
 *   every hop is checked like the first).
 * - The host name is resolved once, every address it resolves to is checked
 *   (only globally routable unicast passes: loopback, private, link-local, unique
 *   local, carrier-grade NAT, multicast, IPv4-mapped and the other special ranges
 *   are refused), and the connection is made to the checked address itself, with
 *   the name kept for SNI, certificate checking and the Host header. No second
 *   lookup happens, so DNS rebinding between check and connect cannot happen.
 * - A hard deadline around the whole fetch, body included, kept by an ordinary
 *   timer that destroys the socket. (An `AbortSignal.timeout` passed to `fetch`
 *   stopped reaching the body stream once garbage collection had run, and a body
 *   trickled a byte at a time held a request for as long as the sender liked.)
 * - A size cap: reading stops, and the socket is destroyed, as soon as more than
 *   the cap has arrived; an announced length above it is refused unread.
 *
 * Failures are `UntrustedFetchError`s with a `kind`; what a caller shows (a
 * uniform message to an unauthenticated caller, a precise one to an owner) is
 * the caller's choice. The resolver, the address policy and the trusted
 * certificates are injectable so tests can stand in a name server and a local
 * TLS server; the defaults are the system resolver and public addresses only.
 */
import { lookup } from 'node:dns/promises';
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type UntrustedFetchFailure = 'not_https' | 'unresolvable' | 'forbidden_address' | 'deadline' | 'too_large' | 'network';

export class UntrustedFetchError extends Error {
  constructor(
    readonly kind: UntrustedFetchFailure,
    message: string,
  ) {
    super(message);
    this.name = 'UntrustedFetchError';
  }
}

/** Every address a name resolves to (the system resolver by default, hosts file included). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface UntrustedFetcherOptions {
  /** @default the system resolver (`dns.lookup`, all addresses) */
  readonly resolve?: Resolver;
  /** Whether an address may be connected to. @default isPublicAddress */
  readonly allowAddress?: (address: string) => boolean;
  /** Certificates to trust besides the system's (tests' own CA). */
  readonly ca?: string | Buffer;
}

export interface UntrustedFetchRequest {
  /** The whole fetch, from resolving the name to the body's last byte, must end within this. */
  readonly deadlineMs: number;
  /** The most body bytes read. */
  readonly maxBytes: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Whether to read the body of this answer; when false it is discarded unread. @default always */
  readonly wantBody?: (status: number, headers: IncomingHttpHeaders) => boolean;
}

export interface UntrustedResponse {
  readonly url: URL;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body, or undefined when `wantBody` declined it. */
  readonly body: Buffer | undefined;
}

/** Only globally routable unicast addresses; everything special (see the file comment) is refused. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.parse(address).range() === 'unicast';
}

const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export class UntrustedFetcher {
  private readonly resolve: Resolver;
  private readonly allowAddress: (address: string) => boolean;

  constructor(private readonly options: UntrustedFetcherOptions = {}) {
    this.resolve = options.resolve ?? systemResolver;
    this.allowAddress = options.allowAddress ?? isPublicAddress;
  }

  /** One GET of `rawUrl`, without following redirects, within the deadline and the size cap. */
  async get(rawUrl: string, request: UntrustedFetchRequest): Promise<UntrustedResponse> {
    const url = httpsUrl(rawUrl);
    const deadline = new Deadline(request.deadlineMs);
    try {
      const address = await deadline.race(this.checkedAddress(url));
      return await this.exchange(url, address, request, deadline);
    } finally {
      deadline.clear();
    }
  }

  /** The address to connect to: every address of the name checked, the first one used. */
  private async checkedAddress(url: URL): Promise<string> {
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch {
        throw new UntrustedFetchError('unresolvable', `${url.hostname} could not be resolved.`);
      }
      if (addresses.length === 0) throw new UntrustedFetchError('unresolvable', `${url.hostname} could not be resolved.`);
    }
    if (!addresses.every((address) => this.allowAddress(address))) {
      throw new UntrustedFetchError('forbidden_address', `${url.hostname} resolves to an address that is not public.`);
    }
    return addresses[0]!;
  }

  private exchange(url: URL, address: string, request: UntrustedFetchRequest, deadline: Deadline): Promise<UntrustedResponse> {
    return new Promise<UntrustedResponse>((resolve, reject) => {
      const hostIsName = !isIP(url.hostname.replace(/^\[|\]$/g, ''));
      const outgoing = httpsRequest({
        host: address,
        port: url.port || 443,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { ...request.headers, host: url.host },
        // The name, not the address, is what the certificate must name.
        ...(hostIsName ? { servername: url.hostname } : {}),
        ...(this.options.ca ? { ca: this.options.ca } : {}),
        agent: false,
      });
      const fail = (error: unknown) => reject(error instanceof UntrustedFetchError ? error : new UntrustedFetchError('network', `${url.host} could not be fetched.`));
      deadline.onExpiry(() => {
        const error = new UntrustedFetchError('deadline', `${url.host} did not answer in full within ${request.deadlineMs} ms.`);
        outgoing.destroy(error);
        reject(error);
      });
      outgoing.on('error', fail);
      outgoing.on('response', (incoming: IncomingMessage) => {
        incoming.on('error', fail);
        const status = incoming.statusCode ?? 0;
        if (request.wantBody && !request.wantBody(status, incoming.headers)) {
          outgoing.destroy();
          resolve({ url, status, headers: incoming.headers, body: undefined });
          return;
        }
        const announced = Number(incoming.headers['content-length'] ?? Number.NaN);
        if (Number.isFinite(announced) && announced > request.maxBytes) {
          outgoing.destroy();
          reject(tooLarge(url, request.maxBytes));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > request.maxBytes) {
            outgoing.destroy();
            reject(tooLarge(url, request.maxBytes));
            return;
          }
          chunks.push(chunk);
        });
        incoming.on('end', () => resolve({ url, status, headers: incoming.headers, body: Buffer.concat(chunks) }));
        incoming.on('close', () => {
          if (!incoming.complete) fail(undefined);
        });
      });
      outgoing.end();
    });
  }
}

/** A plain timer, held strongly until cleared: nothing about it can be collected while a fetch runs. */
class Deadline {
  private readonly timer: NodeJS.Timeout;
  private expired = false;
  private listeners: (() => void)[] = [];

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      for (const listener of this.listeners) listener();
    }, ms);
  }

  onExpiry(listener: () => void): void {
    if (this.expired) listener();
    else this.listeners.push(listener);
  }

  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.onExpiry(() => reject(new UntrustedFetchError('deadline', 'The address did not resolve in time.')));
      work.then(resolve, reject);
    });
  }

  clear(): void {
    clearTimeout(this.timer);
    this.listeners = [];
  }
}

function httpsUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UntrustedFetchError('not_https', 'Not a web address.');
  }
  if (url.protocol !== 'https:' || url.username || url.password) throw new UntrustedFetchError('not_https', `${url.protocol === 'https:' ? 'A URL with credentials' : 'A URL that is not https'} is not fetched.`);
  return url;
}

function tooLarge(url: URL, maxBytes: number): UntrustedFetchError {
  return new UntrustedFetchError('too_large', `${url.host} sent more than ${maxBytes} bytes.`);
}
