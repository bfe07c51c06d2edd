/**
 * The local server's keyword side in memory, as an agent and an owner meet it: the copy
 * loads once the server answers, a record imported while it runs is found by the very
 * next search (answered by the statement until the copy of the new corpus has loaded,
 * never from the older copy), and `CHATCTX_KEYWORD_INDEX=store` keeps every search on
 * the statement. Real server (`npm start`'s script), the official MCP client, the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { reviewedRecord } from '../support/records.ts';
import { connectClient } from '../support/mcp-client.ts';

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'chatctx-keyword-index-'));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function slugsFor(server: TestServer, query: string): Promise<string[]> {
  const client = await connectClient(server.url);
  try {
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query } });
    return ((result.structuredContent as { results?: { slug: string }[] }).results ?? []).map((r) => r.slug);
  } finally {
    await client.close();
  }
}

/** The generations the server logged a loaded copy for. */
const loaded = (server: TestServer) => [...server.output().matchAll(/"event":"keyword_index","outcome":"loaded","generation":(\d+)/g)].map((m) => Number(m[1]));

async function until<T>(read: () => T | undefined, what: string): Promise<T> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('the keyword side in memory on the local server', () => {
  it('loads after start, and a record imported meanwhile is found at once, then from a copy of the new corpus', async () => {
    const server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
    try {
      const first = await until(() => loaded(server)[0], 'the first copy');
      expect(await slugsFor(server, 'paginate a large postgres table with keyset pagination')).toContain('use-keyset-pagination-instead-of-large-offset');

      const slug = 'keyword-index-lighthouse-rotation';
      const path = join(work, `${slug}.json`);
      await writeFile(path, JSON.stringify(reviewedRecord(slug), null, 2));
      const imported = await runCli(['--data-dir', server.dataDir, 'records', 'import', path, '--approve'], { CHATCTX_EMBEDDINGS: 'none', CHATCTX_REVIEWER: 'keyword index suite' });
      expect(imported.code, imported.stderr).toBe(0);
      const question = `should ${slug} calls time out`;
      // The next search sees the new generation: the statement answers it, and a load of the new copy starts.
      expect(await slugsFor(server, question)).toContain(slug);
      const next = await until(() => loaded(server).find((g) => g > first), 'a copy of the new corpus');
      expect(next).toBeGreaterThan(first);
      expect(await slugsFor(server, question)).toContain(slug);
    } finally {
      await server.stop();
    }
  }, 300_000);

  it('is not loaded with CHATCTX_KEYWORD_INDEX=store, and searches still answer', async () => {
    const server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none', CHATCTX_KEYWORD_INDEX: 'store' });
    try {
      expect(await slugsFor(server, 'paginate a large postgres table with keyset pagination')).toContain('use-keyset-pagination-instead-of-large-offset');
      expect(server.output()).not.toContain('"event":"keyword_index"');
    } finally {
      await server.stop();
    }
  }, 300_000);
});
