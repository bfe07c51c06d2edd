/**
 * Guest quota, API keys and key quotas against the running server. Keys are
 * issued and revoked with the real CLI while the server holds the store, as an
 * owner would do it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { connectClient, post, toolCall } from '../support/mcp-client.ts';

const GUEST_LIMIT = 20;
let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_GUEST_DAILY_LIMIT: String(GUEST_LIMIT) });
});

afterAll(async () => {
  await server?.stop();
});

const search = (id: number) => toolCall('search_knowledge', { query: 'retry with backoff' }, id);
const secondsToUtcMidnight = () => {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
};

async function cli(...args: string[]) {
  const result = await runCli(['--json', ...args], { CHATCTX_DATA_DIR: server.dataDir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as any;
}

describe('guest quota', () => {
  it('does not count the handshake, tools/list, ping or notifications', async () => {
    const client = await connectClient(server.url);
    await client.listTools();
    await client.ping();
    await client.close();
    const res = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.headers.get('x-guest-quota-remaining')).toBe(String(GUEST_LIMIT));
  });

  it('lets exactly the limit through when 50 tool calls race, and refuses the rest with 429', async () => {
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => post(server.url, search(i + 1))));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(GUEST_LIMIT);
    expect(refused).toHaveLength(50 - GUEST_LIMIT);
    for (const r of refused) {
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(Math.abs(retryAfter - secondsToUtcMidnight())).toBeLessThan(30);
      expect(r.headers.get('x-guest-quota-limit')).toBe(String(GUEST_LIMIT));
      expect(r.headers.get('x-guest-quota-remaining')).toBe('0');
    }
    const remaining = ok.map((r) => Number(r.headers.get('x-guest-quota-remaining'))).sort((a, b) => a - b);
    expect(remaining[0]).toBe(0);
  });

  it('still completes a handshake once the quota is spent', async () => {
    const client = await connectClient(server.url);
    expect((await client.listTools()).tools).toHaveLength(3);
    await client.close();
  });
});

describe('API keys', () => {
  let keyId: string;
  let key: string;

  it('issues a key through the CLI while the server runs, and the key bypasses the guest quota', async () => {
    const created = await cli('keys', 'create', '--name', 'e2e agent');
    keyId = created.id;
    key = created.key;
    expect(key).toMatch(/^kb_live_[A-Za-z0-9_-]{43}$/);
    const client = await connectClient(server.url, key);
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'retry with backoff' } });
    expect(result.isError).toBeFalsy();
    await client.close();
    const res = await post(server.url, search(1), { Authorization: `Bearer ${key}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-guest-quota-limit')).toBeNull();
  });

  it('lists keys without their plaintext and with last use', async () => {
    const list = await cli('keys', 'list');
    const entry = list.find((k: any) => k.id === keyId);
    expect(entry).toMatchObject({ name: 'e2e agent', revoked_at: null });
    expect(entry.last_used_at).not.toBeNull();
    expect(JSON.stringify(list)).not.toContain(key);
  });

  it('refuses an unknown well-formed key with 401 and WWW-Authenticate, never as a guest', async () => {
    const res = await post(server.url, search(1), { Authorization: `Bearer kb_live_${'A'.repeat(43)}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="chatctx", error="invalid_token"/);
    expect(res.headers.get('x-guest-quota-limit')).toBeNull();
  });

  it('refuses malformed credentials with 401', async () => {
    for (const header of ['Bearer not-a-key', 'Basic dXNlcjpwYXNz', `Bearer kb_live_short`, 'Bearer']) {
      const res = await post(server.url, search(1), { Authorization: header });
      expect(res.status, header).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
    }
  });

  it('refuses a revoked key with 401, also for the handshake', async () => {
    const revoked = await cli('keys', 'revoke', keyId);
    expect(revoked.revoked_at).not.toBeNull();
    const res = await post(server.url, search(1), { Authorization: `Bearer ${key}` });
    expect(res.status).toBe(401);
    await expect(connectClient(server.url, key)).rejects.toThrow();
  });

  it('enforces a key\'s daily quota with 429 and Retry-After, and applies a raised quota at once', async () => {
    const limited = await cli('keys', 'create', '--name', 'limited', '--daily-quota', '2');
    const auth = { Authorization: `Bearer ${limited.key}` };
    expect((await post(server.url, search(1), auth)).status).toBe(200);
    expect((await post(server.url, search(2), auth)).status).toBe(200);
    const refused = await post(server.url, search(3), auth);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The handshake is never refused for quota.
    expect((await post(server.url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, auth)).status).toBe(200);

    await cli('keys', 'set-quota', limited.id, '3');
    expect((await post(server.url, search(4), auth)).status).toBe(200);
    expect((await post(server.url, search(5), auth)).status).toBe(429);
  });
});
