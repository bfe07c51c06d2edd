/**
 * The guest identity of a local connection: the socket's peer address, unless
 * that peer is a configured trusted proxy. A client-supplied `X-Forwarded-For` is
 * never believed otherwise, so a guest cannot reset its quota by sending one.
 */
import type { IncomingMessage } from 'node:http';

/** `::ffff:127.0.0.1` → `127.0.0.1`, so one client has one guest identity. */
export function normalizeIp(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The client address: the socket's peer, or, behind trusted proxies, the
 * right-most X-Forwarded-For hop that is not a trusted proxy.
 */
export function clientIp(incoming: Pick<IncomingMessage, 'socket' | 'headers'>, trustedProxies: readonly string[]): string {
  const peer = normalizeIp(incoming.socket.remoteAddress);
  if (!trustedProxies.includes(peer)) return peer;
  const forwarded = String(incoming.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(normalizeIp);
  for (let i = forwarded.length - 1; i >= 0; i--) if (!trustedProxies.includes(forwarded[i]!)) return forwarded[i]!;
  return peer;
}
