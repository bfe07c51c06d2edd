/**
 * CORS for browser clients of the MCP endpoint (`lambdas/protocol/cors.ts`): the
 * request's own Origin echoed with the headers a client must be able to read, no
 * CORS headers without an Origin, and what a preflight allows.
 */
import { describe, expect, it } from 'vitest';
import { preflight, withCors } from '../../lambdas/protocol/cors.ts';

const from = (origin?: string, method = 'POST') => new Request('http://127.0.0.1:8787/mcp', { method, headers: origin ? { Origin: origin } : {} });

describe('withCors', () => {
  it('echoes the Origin, exposes the quota, retry and auth headers, and varies on Origin', async () => {
    const answer = new Response('{"ok":true}', { status: 429, headers: { 'Retry-After': '60', 'Content-Type': 'application/json' } });
    const response = withCors(from('http://localhost:6274'), answer);
    expect(response.status).toBe(429);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    const exposed = response.headers.get('access-control-expose-headers')!.split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['X-Guest-Quota-Limit', 'X-Guest-Quota-Remaining', 'Retry-After', 'WWW-Authenticate']));
    expect(response.headers.get('vary')).toBe('Origin');
    expect(response.headers.get('retry-after')).toBe('60');
    expect(await response.text()).toBe('{"ok":true}');
  });

  it('adds nothing for a request without Origin', () => {
    const response = withCors(from(), new Response('x'));
    expect([...response.headers.keys()].filter((name) => name.startsWith('access-control') || name === 'vary')).toEqual([]);
  });
});

describe('preflight', () => {
  it('answers 204 with the methods and the MCP headers a browser client sends, for ten minutes', async () => {
    const response = preflight(from('http://localhost:6274', 'OPTIONS'));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(response.headers.get('access-control-allow-methods')!.split(/,\s*/).sort()).toEqual(['GET', 'OPTIONS', 'POST']);
    const allowed = response.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id']));
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
  });

  it('names no origin for a preflight without one', () => {
    expect(preflight(from(undefined, 'OPTIONS')).headers.get('access-control-allow-origin')).toBeNull();
  });
});
