/**
 * Third-party clients against the running server: the official MCP conformance
 * suite, 0.1.16 and the 0.2.0 pre-release for 2026-07-28 (both run under the Node 22
 * that ships in a dev dependency), and the MCP Inspector CLI with an Authorization
 * header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'check', script), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, out }));
  });
}

describe('MCP conformance suite', () => {
  it('passes every scenario that applies to a tools-only server, under 0.1.16 (2025 revisions) and the 0.2.0 pre-release (2026-07-28)', async () => {
    const { code, out } = await runScript('conformance.mjs', [server.url]);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection']) {
      expect(out).toContain(`PASS  0.1.16 ${scenario} `);
    }
    for (const scenario of ['server-stateless', 'tools-list', 'caching', 'http-header-validation', 'input-required-result-unsupported-methods']) {
      expect(out).toContain(`PASS  0.2.0-alpha.12 ${scenario} `);
    }
    expect(out).toContain('N/A   0.2.0-alpha.12 resources-list ');
    expect(out).toContain('0.1.16 (2025 revisions): 5 passed, 25 not applicable, 0 failed');
    expect(out).toContain('0.2.0-alpha.12 (2026-07-28): 7 passed, 43 not applicable, 0 failed');
    expect(out).not.toMatch(/^FAIL/m);
    expect(code).toBe(0);
  });

  it('fails when a scenario outside the not-applicable list fails, or when the list names what the suite does not run', async () => {
    const list = JSON.parse(await readFile(join(REPO_ROOT, 'test', 'conformance', 'not-applicable.json'), 'utf8'));
    const next = list.suites['0.2.0-alpha.12'];
    delete next.scenarios['resources-list'];
    delete next.checks.caching;
    next.scenarios['resources-frobnicate'] = 'no such scenario';
    next.checks['server-stateless']['sep-2575-no-such-check'] = 'no such check';
    const dir = await mkdtemp(join(tmpdir(), 'chatctx-na-'));
    try {
      const file = join(dir, 'not-applicable.json');
      await writeFile(file, JSON.stringify(list));
      const { code, out } = await runScript('conformance.mjs', [server.url, '--suite', 'next', '--not-applicable', file]);
      expect(out).toMatch(/^FAIL  0\.2\.0-alpha\.12 resources-list .*Method not found/m);
      expect(out).toMatch(/^FAIL  0\.2\.0-alpha\.12 caching .*sep-2549-prompts-list-caching-hints/m);
      expect(out).toContain('the not-applicable list names scenario resources-frobnicate, which the suite did not run');
      expect(out).toContain('the not-applicable list names check server-stateless/sep-2575-no-such-check, which the suite did not run');
      expect(out).toContain('0.2.0-alpha.12 (2026-07-28): 6 passed, 42 not applicable, 2 failed');
      expect(out).toContain('conformance failed');
      expect(code).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
