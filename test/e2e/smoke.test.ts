/**
 * `npm run smoke` against the local server, as a platform engineer runs it after a
 * deploy: a child process checking the endpoint end to end with the official SDK
 * clients of both eras and plain HTTP. Every check passes on a healthy server; a
 * wrong URL fails the run with exit code 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { REPO_ROOT, startPreparedServer, type TestServer } from '../support/local-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

function smoke(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/check/smoke.ts', ...args], { cwd: REPO_ROOT, env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('npm run smoke', () => {
  it('passes every check against a healthy local server, with a latency for each', async () => {
    const result = await smoke('--url', server.url, '--json');
    expect(result.code, result.stderr).toBe(0);
    const { checks } = JSON.parse(result.stdout) as { checks: { name: string; ok: boolean; ms: number }[] };
    expect(checks.map((c) => c.name)).toEqual([
      'v1 client connects (initialize)', 'tools/list', 'search_knowledge', 'get_guidance', 'submit_feedback',
      'v2 client, pinned to 2026-07-28', 'guest quota headers', 'a made-up key gets 401', 'OAuth metadata', 'sitemap.xml', 'robots.txt', 'GET on the MCP URL',
    ]);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(checks.every((c) => c.ms >= 0)).toBe(true);
  }, 300_000);

  it('fails, with exit code 1, against a URL that is not an MCP endpoint', async () => {
    const result = await smoke('--url', server.url.replace('/mcp', '/not-mcp'));
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/\| v1 client connects \(initialize\) \| FAILED \|/);
  }, 300_000);
});
