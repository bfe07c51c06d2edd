/**
 * A key's last use is kept to the hour, so the store cannot tell when within the
 * hour its owner called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { post } from '../support/mcp-client.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
});
afterAll(() => server?.stop());

describe('privacy of key use', () => {
  it('keeps a key\u2019s last use to the hour', async () => {
    const created = await runCli(['--data-dir', server.dataDir, '--json', 'keys', 'create', '--name', 'coarse']);
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    expect((await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { Authorization: `Bearer ${key}` })).status).toBe(200);
    const keys = JSON.parse((await runCli(['--data-dir', server.dataDir, '--json', 'keys', 'list'])).stdout) as { id: string; last_used_at: string }[];
    expect(keys.find((k) => k.id === id)!.last_used_at).toMatch(/T\d{2}:00:00\.000Z$/);
  });
});
