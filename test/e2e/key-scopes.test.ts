/**
 * Key scopes as an owner and an agent meet them: `chatctx keys create --collections`
 * and `keys scope` from the real CLI, through the running server;
 * a key without the feedback scope refused by submit_feedback over the real MCP
 * endpoint with nothing stored; an OAuth access token seeing what its key sees now:
 * an internal record found, gone (and `missing`) once the owner removes the scope,
 * and 401 once the key is revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { exchangeAuthorization, registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import { preparedDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import { MCP_ACCEPT, authorize, connectWithToken, discoverFrom401 } from '../support/oauth-flow.ts';
import { reviewedRecord } from '../support/records.ts';
import { DataDirLock } from '../../lambdas/local/data-dir.ts';
import { openLocalStore } from '../../lambdas/local/local-store.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';

const INTERNAL = reviewedRecord('vault-rotation-runbook');
const SLUG = INTERNAL.slug as string;
const PUBLIC_SLUG = 'use-stable-keys-for-dynamic-react-lists';
const REDIRECT = 'http://127.0.0.1:33419/callback';

let dataDir: string;
let server: TestServer | undefined;

interface ShownKey {
  id: string;
  name: string;
  key?: string;
  collections: string[];
  feedback: boolean;
}

const cli = (...args: string[]) => runCli(['--data-dir', dataDir, ...args], { CHATCTX_EMBEDDINGS: 'none' });
async function json<T>(...args: string[]): Promise<T> {
  const run = await cli('--json', ...args);
  expect(run.code, run.stderr + run.stdout).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** The store an owner has after creating an `internal` collection and importing a record into it (their commands are another part's). */
async function storeWithInternalRecord(dir: string): Promise<void> {
  const lock = (await DataDirLock.tryAcquire(dir, 'test set-up'))!;
  const store = await openLocalStore(lock);
  try {
    await createCollection(store.sql, 'internal', 'team-only runbooks');
    await importRecords(store.sql, await validateRecords([INTERNAL], () => 'internal record'), { approve: true, collection: 'internal' });
  } finally {
    await store.close();
    await lock.release();
  }
}

beforeAll(async () => {
  dataDir = await preparedDataDir();
  await storeWithInternalRecord(dataDir);
  // The CLI's commands go through the running server (as an owner's would), which is also what makes a scope change apply at once.
  server = await startServer({ CHATCTX_EMBEDDINGS: 'none' }, dataDir);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

let team: ShownKey;
let quiet: ShownKey;

describe('chatctx keys with scopes', () => {
  it('creates a key scoped to named collections, public and feedback by default, and refuses an unknown collection', async () => {
    const created = await cli('keys', 'create', '--name', 'team agent', '--collections', 'public,internal');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('Scopes: public, internal, feedback');
    team = { ...(JSON.parse((await cli('--json', 'keys', 'list')).stdout) as ShownKey[]).find((k) => k.name === 'team agent')!, key: /kb_live_\S+/.exec(created.stdout)![0] };
    expect(team).toMatchObject({ collections: ['public', 'internal'], feedback: true });

    quiet = await json<ShownKey>('keys', 'create', '--name', 'quiet agent', '--no-feedback');
    expect(quiet).toMatchObject({ collections: ['public'], feedback: false });

    const unknown = await cli('keys', 'create', '--name', 'typo', '--collections', 'public,intranet');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No collection is named "intranet"');
    expect((await json<ShownKey[]>('keys', 'list')).map((k) => k.name)).not.toContain('typo');
  });

  it('adds and removes scopes with keys scope, prints the result, and lists scopes beside each key', async () => {
    const changed = await cli('keys', 'scope', quiet.id, '--add', 'internal', '--remove', 'public');
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toContain(`Key ${quiet.id} (quiet agent) now has the scopes: internal.`);
    expect((await cli('keys', 'scope', quiet.id, '--add', 'public', '--remove', 'internal')).stdout).toContain('now has the scopes: public.');

    const listed = await cli('keys', 'list');
    expect(listed.stdout).toMatch(new RegExp(`${team.id}  team agent  unlimited  scopes: public, internal, feedback  active`));
    expect(listed.stdout).toMatch(new RegExp(`${quiet.id}  quiet agent  unlimited  scopes: public  active`));

    const nothing = await cli('keys', 'scope', quiet.id);
    expect(nothing.code).not.toBe(0);
    expect(nothing.stderr).toContain('--add NAMES or --remove NAMES');
    const empty = await cli('keys', 'scope', quiet.id, '--remove', 'public');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('at least one collection');
  });
});

describe('scopes at the MCP endpoint', () => {
  it('refuses feedback from a key without the feedback scope and stores nothing, until the owner adds the scope', async () => {
    const agent = await connectClient(server!.url, (await freshKey('feedback agent', ['--no-feedback'])).key);
    const send = () => agent.callTool({ name: 'submit_feedback', arguments: { category: 'outdated', record: PUBLIC_SLUG, comment: 'The linked page moved.' } });
    const refused = await send();
    expect(refused.isError).toBe(true);
    const error = (refused.structuredContent as { error: { code: string; details: { issues: { code: string }[] } } }).error;
    expect(error.code).toBe('validation_error');
    expect(error.details.issues.map((i) => i.code)).toEqual(['feedback_not_in_scope']);
    expect(await json<unknown[]>('feedback', 'list')).toEqual([]);

    const id = (await json<ShownKey[]>('keys', 'list')).find((k) => k.name === 'feedback agent')!.id;
    expect(await json<ShownKey>('keys', 'scope', id, '--add', 'feedback')).toMatchObject({ collections: ['public'], feedback: true });
    // The same session, the same key: the server's key cache forgot the key when its scope changed.
    expect((await send()).isError).toBeFalsy();
    expect(await json<{ record: string }[]>('feedback', 'list')).toMatchObject([{ record: PUBLIC_SLUG }]);
    await agent.close();
  });

  it("gives an OAuth access token its key's scope as it stands: internal found, then missing once removed, then 401 once revoked", async () => {
    const found = await discoverFrom401(fetch, server!.url);
    const client = await registerClient(found.issuer, { metadata: found.server, clientMetadata: { client_name: 'Scoped connector', redirect_uris: [REDIRECT] }, fetchFn: fetch });
    const { code, codeVerifier } = await authorize(fetch, found, client, REDIRECT, team.key!);
    const tokens = await exchangeAuthorization(found.issuer, {
      metadata: found.server,
      clientInformation: client,
      authorizationCode: code,
      codeVerifier,
      redirectUri: REDIRECT,
      resource: new URL(server!.url),
      fetchFn: fetch,
    });
    expect(tokens.scope ?? '').toBe('');
    const mcp = await connectWithToken(fetch, server!.url, tokens.access_token);
    expect(await searched(mcp)).toContain(SLUG);
    expect(await guidance(mcp)).toEqual({ results: [SLUG], missing: [] });

    expect(await json<ShownKey>('keys', 'scope', team.id, '--remove', 'internal')).toMatchObject({ collections: ['public'] });
    expect(await searched(mcp)).not.toContain(SLUG);
    expect(await guidance(mcp)).toEqual({ results: [], missing: [SLUG] });
    await mcp.close();

    await json('keys', 'revoke', team.id);
    const refused = await fetch(server!.url, {
      method: 'POST',
      headers: { ...MCP_ACCEPT, Authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
  });
});

async function freshKey(name: string, flags: string[]): Promise<ShownKey> {
  return json<ShownKey>('keys', 'create', '--name', name, ...flags);
}

/** The slugs a search for the internal record's own title returns. */
async function searched(mcp: Client): Promise<string[]> {
  const result = await mcp.callTool({ name: 'search_knowledge', arguments: { query: INTERNAL.title as string } });
  expect(result.isError).toBeFalsy();
  return (result.structuredContent as { results: { slug: string }[] }).results.map((r) => r.slug);
}

async function guidance(mcp: Client): Promise<{ results: string[]; missing: string[] }> {
  const result = await mcp.callTool({ name: 'get_guidance', arguments: { ids: [SLUG] } });
  const answer = result.structuredContent as { results: { slug: string }[]; missing: string[] };
  return { results: answer.results.map((r) => r.slug), missing: answer.missing };
}
