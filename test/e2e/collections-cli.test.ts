/**
 * Collections as an owner works with them from the CLI (a child process on the
 * data directory of a running server, embeddings off): creating and listing them
 * (table and --json), importing into one, the records list and the owner's search
 * per collection, moving a record (a reason required, the move in the history) and
 * what an agent without a key finds before and after, over MCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { reviewedRecord } from '../support/records.ts';
import { connectClient } from '../support/mcp-client.ts';

let server: TestServer;
let work: string;
const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args], { CHATCTX_EMBEDDINGS: 'none', CHATCTX_REVIEWER: 'collections suite' });
const SLUG = 'cli-support-runbook';
const QUESTION = `should ${SLUG} calls time out`;

/** What a guest's search_knowledge returns, over the server's MCP endpoint (the official client, no key). */
async function guestSlugs(): Promise<string[]> {
  const client = await connectClient(server.url);
  try {
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: QUESTION } });
    return ((result.structuredContent as { results: { slug: string }[] }).results ?? []).map((r) => r.slug);
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
  work = await mkdtemp(join(tmpdir(), 'chatctx-collections-'));
}, 300_000);

afterAll(async () => {
  await server?.stop();
  // A set-up that failed before making the folder leaves nothing to remove.
  if (work) await rm(work, { recursive: true, force: true });
});

describe('collections create and list', () => {
  it('creates a collection and lists it beside public, as a table and as JSON; refuses the reserved name', async () => {
    const created = await cli('collections', 'create', 'support', '--description', 'Runbooks for the support team');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('Created collection support.');
    expect(created.stdout).toContain('records import FILE --collection support');

    const table = await cli('collections', 'list');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^name +approved +candidate +deprecated +keys +description$/m);
    expect(table.stdout).toMatch(/^public +\d+ +0 +0 +0 +Guidance every caller sees/m);
    expect(table.stdout).toMatch(/^support +0 +0 +0 +0 +Runbooks for the support team$/m);
    const json = JSON.parse((await cli('--json', 'collections', 'list')).stdout) as { name: string }[];
    expect(json.map((c) => c.name)).toEqual(['public', 'support']);

    const reserved = await cli('collections', 'create', 'feedback');
    expect(reserved.code).toBe(1);
    expect(reserved.stderr).toMatch(/reserved/);
    const renamePublic = await cli('collections', 'rename', 'public', 'everyone');
    expect(renamePublic.code).toBe(1);
    expect(renamePublic.stderr).toMatch(/public/);
  }, 300_000);
});

describe('records import --collection and records move', () => {
  it('imports into the collection, out of a guest\'s reach; a move with a reason shows in the history and the guest finds it', async () => {
    const path = join(work, `${SLUG}.json`);
    await writeFile(path, JSON.stringify(reviewedRecord(SLUG), null, 2));
    expect((await cli('records', 'import', path, '--approve', '--collection', 'support')).code).toBe(0);

    const listed = await cli('records', 'list', '--collection', 'support');
    expect(listed.stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^${SLUG} +approved +v1 +support `))]);
    expect(await guestSlugs()).not.toContain(SLUG);
    const owner = await cli('records', 'search', QUESTION);
    expect(owner.stdout).toMatch(/^collections: every one \(public, support\)/m);
    expect(owner.stdout).toMatch(new RegExp(`^Shown:\\n {2}${SLUG} `, 'm'));
    const publicOnly = await cli('records', 'search', QUESTION, '--collections', 'public');
    expect(publicOnly.stdout).toMatch(/^collections: public$/m);
    expect(publicOnly.stdout).not.toContain(SLUG);

    const noReason = await cli('records', 'move', SLUG, '--to', 'public');
    expect(noReason.code).not.toBe(0);
    expect(noReason.stderr).toMatch(/--reason/);
    const short = await cli('records', 'move', SLUG, '--to', 'public', '--reason', 'ok');
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 10 characters/);

    const moved = await cli('records', 'move', SLUG, '--to', 'public', '--reviewer', 'an owner', '--reason', 'cleared for every customer');
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain(`Moved ${SLUG} from support to public.`);
    const history = await cli('records', 'history', SLUG);
    expect(history.stdout).toMatch(new RegExp(`^${SLUG} +approved +collection public$`, 'm'));
    expect(history.stdout).toMatch(/moved .* from support to public by an owner: cleared for every customer/);
    expect(await guestSlugs()).toContain(SLUG);
    expect((await cli('records', 'list', '--collection', 'support')).stdout.trim()).toBe('No records.');
  }, 300_000);
});
