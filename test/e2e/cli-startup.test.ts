/**
 * A local CLI command loads only what it uses: `keys list` on a data directory
 * runs without the AWS SDK (only `--remote` needs it) and without the MCP SDK
 * (only `serve` needs it), so it is not slowed by a few hundred milliseconds of
 * module loading it never uses. The packages a command loads are read from the
 * process itself, through a module hook (test/support/module-probe.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { REPO_ROOT, preparedDataDir, runCli } from '../support/local-server.ts';

const PROBE = pathToFileURL(join(REPO_ROOT, 'test/support/module-probe.mjs')).href;
let dataDir: string;

/** Runs the CLI with the probe; returns its result and the packages it loaded. */
async function probed(args: string[], env: Record<string, string> = {}) {
  const result = await runCli(['--data-dir', dataDir, ...args], { ...env, NODE_OPTIONS: `--import=${PROBE}` });
  const packages = [...result.stderr.matchAll(/^module-probe: (\S+)$/gm)].map((m) => m[1]!);
  return { ...result, packages };
}

const sdkPackages = (packages: string[]) => packages.filter((name) => /^@(aws-sdk|smithy|modelcontextprotocol)\//.test(name));

beforeAll(async () => {
  // An existing store: what is measured is what the command loads, not creating a store.
  dataDir = await preparedDataDir();
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('what a local CLI command loads', () => {
  it('keys list opens the store and answers without loading the AWS SDK or the MCP SDK', async () => {
    const run = await probed(['keys', 'list']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('No API keys yet');
    // The probe saw the packages the command does use, so an empty list below means something.
    expect(run.packages).toEqual(expect.arrayContaining(['commander', '@electric-sql/pglite']));
    expect(sdkPackages(run.packages)).toEqual([]);
  });

  it('keys list --remote does load the AWS SDK (the probe sees it when it is loaded)', async () => {
    // An endpoint nobody listens on: the call fails at once, after the client was loaded.
    const aws = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_MAX_ATTEMPTS: '1' };
    const run = await probed(['--remote', 'chatctx-admin', 'keys', 'list'], aws);
    expect(run.code).toBe(1);
    expect(run.packages).toContain('@aws-sdk/client-lambda');
  });
});
