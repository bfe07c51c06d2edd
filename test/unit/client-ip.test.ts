/**
 * Guest identity: the socket address, unless the peer is a configured trusted proxy.
 * A client-supplied X-Forwarded-For must never change who is counted.
 */
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { clientIp, normalizeIp } from '../../lambdas/local/client-ip.ts';

const incoming = (peer: string, forwarded?: string) =>
  ({ socket: { remoteAddress: peer }, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} }) as unknown as IncomingMessage;

describe('client IP', () => {
  it('ignores X-Forwarded-For from an untrusted peer', () => {
    expect(clientIp(incoming('203.0.113.9', '198.51.100.1'), [])).toBe('203.0.113.9');
  });

  it('takes the right-most untrusted hop when the peer is a trusted proxy', () => {
    expect(clientIp(incoming('10.0.0.2', '198.51.100.1, 203.0.113.5, 10.0.0.3'), ['10.0.0.2', '10.0.0.3'])).toBe('203.0.113.5');
  });

  it('falls back to the peer when a trusted proxy sends no header', () => {
    expect(clientIp(incoming('10.0.0.2'), ['10.0.0.2'])).toBe('10.0.0.2');
  });

  it('treats IPv4-mapped IPv6 as the IPv4 address', () => {
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeIp('::1')).toBe('::1');
  });
});
