/**
 * Third-party clients against the running server: the official MCP conformance
 * scenarios (run under the Node 22 that ships in a dev dependency) and the MCP
 * Inspector CLI with an Authorization header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, runCli, startServer, type TestServer } from '../support/local-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.stop();
});

function runScript(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', script), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, out }));
  });
}

describe('MCP conformance suite', () => {
  it('passes server-initialize, ping and tools-list', async () => {
    const { code, out } = await runScript('conformance.mjs', [server.url, 'server-initialize', 'ping', 'tools-list']);
    expect(out).toContain('PASS  server-initialize');
    expect(out).toContain('PASS  ping');
    expect(out).toContain('PASS  tools-list');
    expect(out).toContain('3 passed, 0 failed');
    expect(code).toBe(0);
  });
});

describe('MCP Inspector CLI', () => {
  it('lists the tools and calls search_knowledge with the key from CHATCTX_API_KEY, never on the command line', async () => {
    const created = await runCli(['--json', 'keys', 'create', '--name', 'inspector'], { CHATCTX_DATA_DIR: server.dataDir });
    const key = JSON.parse(created.stdout).key as string;
    const withKey = { CHATCTX_API_KEY: key };

    const list = await runScript('inspect.mjs', [server.url, '--method', 'tools/list'], withKey);
    expect(list.code).toBe(0);
    expect(list.out).toContain('"name": "search_knowledge"');

    const call = await runScript('inspect.mjs', [
      server.url,
      '--method',
      'tools/call',
      '--tool-name',
      'search_knowledge',
      '--tool-arg',
      'query=retry transient failures with exponential backoff',
    ], withKey);
    expect(call.code).toBe(0);
    expect(call.out).toContain('"slug": "retry-with-capped-exponential-backoff-jitter-and-retry-after"');

    const refused = await runScript('inspect.mjs', [server.url, '--method', 'tools/list'], { CHATCTX_API_KEY: `kb_live_${'x'.repeat(43)}` });
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain('invalid or revoked');
  });
});
