/**
 * Origin and Host validation (DNS-rebinding protection), applied by the front door
 * (`endpoint.ts`) alone: Host on every path, Origin too for the MCP endpoint.
 *
 * Host must name this server (an allow-list; `*` disables the check for deployments
 * behind a gateway that already pins the host). Origin, when a browser sends one,
 * must be on its own allow-list or be this server's own origin (the scheme of the
 * request and an allowed Host, so a server on an ephemeral port accepts pages it
 * serves itself). Both failures are 403.
 */
export interface OriginPolicy {
  /** Lower-case `host` or `host:port` entries; `['*']` accepts any Host. */
  readonly allowedHosts: readonly string[];
  /** Exact origins such as `http://localhost:6274`; `['*']` accepts any Origin. */
  readonly allowedOrigins: readonly string[];
}

/** Returns a reason when the request must be refused, otherwise undefined. */
export function checkOrigin(request: Request, policy: OriginPolicy): string | undefined {
  let ownOrigin: string | undefined;
  if (!policy.allowedHosts.includes('*')) {
    const host = (request.headers.get('host') ?? new URL(request.url).host).toLowerCase();
    const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
    // What follows the name may only be a port: `[::1]rebound.example` or `localhost:rebound` is no loopback Host.
    const portOnly = /^(:\d{1,5})?$/.test(host.slice(hostname.length));
    if (!policy.allowedHosts.includes(host) && !(portOnly && policy.allowedHosts.includes(hostname))) {
      return 'Host not allowed. Use the documented endpoint host.';
    }
    // Only a pinned Host makes the origin built from it this server's own.
    ownOrigin = `${new URL(request.url).protocol}//${host}`;
  }
  const origin = request.headers.get('origin')?.toLowerCase();
  if (origin !== undefined && !policy.allowedOrigins.includes('*') && !policy.allowedOrigins.includes(origin) && origin !== ownOrigin) {
    return 'Origin not allowed.';
  }
  return undefined;
}

/** Loopback names: the default Host allow-list of a local server (any port). */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];
