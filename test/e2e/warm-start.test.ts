/**
 * The server is warm when it says it is ready: before it prints its URL it has run
 * the encoder and the tools once (lambdas/local/warm-up.ts), so the first question
 * an agent asks after a restart is answered by the encoder like any other, and the
 * warm-up's own searches are nowhere in the owner's analytics or the guest quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { preparedDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import type { AnalyticsResult } from '../../lambdas/admin/admin-operations.ts';

let dataDir: string;
let server: TestServer;
let client: Client;

beforeAll(async () => {
  // A copy of a data directory after its first start (which imported and embedded the starter corpus): the restart is the one under test.
  dataDir = await preparedDataDir();
  server = await startServer({}, dataDir);
  client = await connectClient(server.url);
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a restarted server is warm when it says it is ready', () => {
  it('has run the encoder before it prints its URL', () => {
    const output = server.output();
    const warm = /"event":"warm_up"[^\n]*/.exec(output);
    expect(warm?.[0]).toContain('"encoder":"ready"');
    expect(warm!.index).toBeLessThan(output.indexOf('serving MCP at'));
  });

  it('answers its first new question with the encoder (hybrid, not degraded)', async () => {
    const search = await client.callTool({ name: 'search_knowledge', arguments: { query: 'retry transient failures of an HTTP call with backoff' } });
    const retrieval = (search.structuredContent as { retrieval: { mode: string; degraded: boolean; embedding_cache: string } }).retrieval;
    expect(retrieval).toMatchObject({ mode: 'hybrid', degraded: false, embedding_cache: 'miss' });
  });

  it('leaves its own searches out of the analytics: only the agent\'s search is counted', async () => {
    // Search events are written in batches (within a second): wait for the agent's, then count.
    const searches = async () => {
      const run = await runCli(['--json', '--data-dir', dataDir, 'analytics']);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as AnalyticsResult).searches;
    };
    await expect.poll(searches, { timeout: 60_000, interval: 500 }).toBeGreaterThan(0);
    expect(await searches()).toBe(1);
  });
});
