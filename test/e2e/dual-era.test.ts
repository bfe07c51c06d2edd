/**
 * Both MCP eras against the real local server process: the v2 SDK client in its
 * 2026-07-28 and legacy modes, the v1 SDK client, and raw 2026 requests.
 */
import { afterAll, beforeAll } from 'vitest';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { describeDualEra } from '../support/dual-era-suite.ts';

const GUEST_LIMIT = 4;
let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none', CHATCTX_GUEST_DAILY_LIMIT: String(GUEST_LIMIT) });
  const created = await runCli(['--json', 'keys', 'create', '--name', 'dual era'], { CHATCTX_DATA_DIR: server.dataDir });
  key = (JSON.parse(created.stdout) as { key: string }).key;
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

// Every request reaches the local server from loopback: one guest, whatever the address.
describeDualEra('local server', () => ({ url: server.url, fetchFrom: () => fetch, key: () => key, guestLimit: GUEST_LIMIT }));
