/**
 * The shared OAuth security suite (`test/support/oauth-security-suite.ts`) against
 * the local server as a child process. Client addresses come from X-Forwarded-For,
 * believed because the test names loopback as a trusted proxy; the registration
 * limits are set low so the suite can reach them.
 */
import { afterAll, beforeAll } from 'vitest';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { describeOAuthSecurity } from '../support/oauth-security-suite.ts';

const REGISTRATIONS_PER_HOUR = 3;
const PENDING_CLIENTS_MAX = 8;
let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({
    CHATCTX_EMBEDDINGS: 'none',
    CHATCTX_TRUSTED_PROXIES: '127.0.0.1',
    CHATCTX_OAUTH_REGISTRATIONS_PER_HOUR: String(REGISTRATIONS_PER_HOUR),
    CHATCTX_OAUTH_PENDING_CLIENTS_MAX: String(PENDING_CLIENTS_MAX),
  });
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describeOAuthSecurity('local server', () => ({
  mcpUrl: server.url,
  // The same server under another name is another resource URL.
  otherMcpUrl: server.url.replace('127.0.0.1', 'localhost'),
  fetchFrom: (address) => (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('X-Forwarded-For', address);
    return fetch(input, { ...init, headers });
  },
  createKey: async (name) => {
    const result = await runCli(['--json', 'keys', 'create', '--name', name], { CHATCTX_DATA_DIR: server.dataDir });
    if (result.code !== 0) throw new Error(result.stderr);
    return JSON.parse(result.stdout) as { id: string; key: string };
  },
  logs: () => server.output().split('\n').filter((line) => line.startsWith('{')),
  registrationsPerHour: REGISTRATIONS_PER_HOUR,
  pendingClientsMax: PENDING_CLIENTS_MAX,
}));
