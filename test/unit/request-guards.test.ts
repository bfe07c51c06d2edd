/**
 * Host and Origin checks against DNS rebinding (`lambdas/protocol/request-guards.ts`):
 * which Host values an allow-list takes (with and without a port, IPv6 literals,
 * `*`), and which Origins pass (the allow-list, `*`, and the server's own origin,
 * which exists only when the Host is pinned).
 */
import { describe, expect, it } from 'vitest';
import { LOOPBACK_HOSTS, checkOrigin, type OriginPolicy } from '../../lambdas/protocol/request-guards.ts';

function request(headers: Record<string, string>, url = 'http://127.0.0.1:8787/mcp'): Request {
  return new Request(url, { headers });
}

const loopback: OriginPolicy = { allowedHosts: LOOPBACK_HOSTS, allowedOrigins: [] };
const pinned: OriginPolicy = { allowedHosts: ['kb.example.com', 'api.example.com:8443'], allowedOrigins: [] };

describe('Host', () => {
  it.each(['localhost', 'localhost:8787', '127.0.0.1:49152', '[::1]', '[::1]:8787', 'LOCALHOST:3000'])(
    'takes %s on the loopback list, any port',
    (host) => {
      expect(checkOrigin(request({ Host: host }), loopback)).toBeUndefined();
    },
  );

  it.each(['rebound.example', 'localhost.rebound.example', '127.0.0.1.nip.io:8787', '[::2]:8787', '0.0.0.0:8787', '[::1]rebound.example', 'localhost:rebound', 'localhost:8787:1'])(
    'refuses %s on the loopback list',
    (host) => {
      expect(checkOrigin(request({ Host: host }), loopback)).toMatch(/^Host not allowed/);
    },
  );

  it('holds an entry with a port to that port, and an entry without one to any', () => {
    expect(checkOrigin(request({ Host: 'api.example.com:8443' }), pinned)).toBeUndefined();
    expect(checkOrigin(request({ Host: 'api.example.com:8444' }), pinned)).toMatch(/Host not allowed/);
    expect(checkOrigin(request({ Host: 'api.example.com' }), pinned)).toMatch(/Host not allowed/);
    expect(checkOrigin(request({ Host: 'kb.example.com:443' }), pinned)).toBeUndefined();
  });

  it('reads the host from the URL when the request carries no Host header', () => {
    expect(checkOrigin(request({}, 'http://localhost:8787/mcp'), loopback)).toBeUndefined();
    expect(checkOrigin(request({}, 'http://rebound.example/mcp'), loopback)).toMatch(/Host not allowed/);
  });

  it('takes any Host when the list is "*"', () => {
    expect(checkOrigin(request({ Host: 'abc123.execute-api.example.com' }), { allowedHosts: ['*'], allowedOrigins: [] })).toBeUndefined();
  });
});

describe('Origin', () => {
  it('lets a request without Origin through: it is not from a browser page', () => {
    expect(checkOrigin(request({ Host: 'localhost:8787' }), loopback)).toBeUndefined();
  });

  it('takes an origin on the allow-list, in any case, and refuses the rest, "null" included', () => {
    const policy: OriginPolicy = { allowedHosts: LOOPBACK_HOSTS, allowedOrigins: ['http://localhost:6274'] };
    expect(checkOrigin(request({ Host: 'localhost:8787', Origin: 'http://localhost:6274' }), policy)).toBeUndefined();
    expect(checkOrigin(request({ Host: 'localhost:8787', Origin: 'HTTP://LOCALHOST:6274' }), policy)).toBeUndefined();
    for (const origin of ['http://localhost:6275', 'https://localhost:6274', 'https://page.example', 'null']) {
      expect(checkOrigin(request({ Host: 'localhost:8787', Origin: origin }), policy), origin).toBe('Origin not allowed.');
    }
  });

  it('takes the server’s own origin on whatever port it runs, and no other scheme or port', () => {
    const own = (origin: string) => checkOrigin(request({ Host: '127.0.0.1:49152', Origin: origin }, 'http://127.0.0.1:49152/mcp'), loopback);
    expect(own('http://127.0.0.1:49152')).toBeUndefined();
    expect(own('https://127.0.0.1:49152')).toBe('Origin not allowed.');
    expect(own('http://127.0.0.1:49153')).toBe('Origin not allowed.');
    expect(own('http://localhost:49152')).toBe('Origin not allowed.');
  });

  it('has no own origin when any Host is taken: a page on the same host needs the allow-list', () => {
    const anyHost: OriginPolicy = { allowedHosts: ['*'], allowedOrigins: [] };
    const sameHost = request({ Host: 'rebound.example', Origin: 'http://rebound.example' }, 'http://rebound.example/mcp');
    expect(checkOrigin(sameHost, anyHost)).toBe('Origin not allowed.');
    expect(checkOrigin(sameHost, { allowedHosts: ['*'], allowedOrigins: ['http://rebound.example'] })).toBeUndefined();
  });

  it('takes any origin when the list is "*", but still refuses a foreign Host first', () => {
    const policy: OriginPolicy = { allowedHosts: LOOPBACK_HOSTS, allowedOrigins: ['*'] };
    expect(checkOrigin(request({ Host: 'localhost', Origin: 'https://page.example' }), policy)).toBeUndefined();
    expect(checkOrigin(request({ Host: 'rebound.example', Origin: 'https://page.example' }), policy)).toMatch(/^Host not allowed/);
  });
});
