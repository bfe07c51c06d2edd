/**
 * Origin and Host validation (DNS-rebinding protection) for the MCP endpoint.
 *
 * Host must name this server (an allow-list; `*` disables the check for deployments
 * behind a gateway that already pins the host). Origin, when a browser sends one,
 * must be on its own allow-list. Both failures are 403.
 */
export interface OriginPolicy {
  /** Lower-case `host` or `host:port` entries; `['*']` accepts any Host. */
  readonly allowedHosts: readonly string[];
  /** Exact origins such as `http://localhost:6274`; `['*']` accepts any Origin. */
  readonly allowedOrigins: readonly string[];
}

/** Returns a reason when the request must be refused, otherwise undefined. */
export function checkOrigin(request: Request, policy: OriginPolicy): string | undefined {
  if (!policy.allowedHosts.includes('*')) {
    const host = (request.headers.get('host') ?? new URL(request.url).host).toLowerCase();
    const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
    if (!policy.allowedHosts.includes(host) && !policy.allowedHosts.includes(hostname)) {
      return 'Host not allowed. Use the documented endpoint host.';
    }
  }
  const origin = request.headers.get('origin');
  if (origin !== null && !policy.allowedOrigins.includes('*') && !policy.allowedOrigins.includes(origin.toLowerCase())) {
    return 'Origin not allowed.';
  }
  return undefined;
}

/** Loopback names: the default Host allow-list of a local server (any port). */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];
