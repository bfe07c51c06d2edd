/**
 * The owner console's door and its keys pages, in process over a real PGlite store
 * and the real admin operations: single-use links, sessions and their expiry, CSRF,
 * the security headers, loopback names only; a key created, shown once, used and
 * revoked, and the CLI's view of the same keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole, type OwnerConsole } from '../../lambdas/console/console-app.ts';
import { CONSOLE_LIMITS } from '../../lambdas/console/console-sessions.ts';
import { runAdminCommand, type AdminDeps } from '../../lambdas/admin/admin-operations.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { CONSOLE_ORIGIN, ConsoleClient } from '../support/console-client.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import type { OwnerKeyInfo } from '../../lambdas/admin/key-scopes.ts';

let store: MemoryStore;
let deps: AdminDeps;
let clock = Date.parse('2026-12-01T10:00:00Z');
let console: OwnerConsole;

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
  deps = { sql: store.sql, secrets: { pepper: async () => store.pepper } };
  console = createConsole({ run: (command) => runAdminCommand(deps, command), target: 'test store', logger: store.logger, now: () => clock });
});
afterAll(async () => store.sql.close());

describe('the door', () => {
  it('trades a link for a session once, then sends the token out of the address bar', async () => {
    const link = new URL(console.issueLink(CONSOLE_ORIGIN));
    const client = new ConsoleClient(console);
    const first = await client.get(link.pathname + link.search);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/console/queue');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/console/);
    const again = await new ConsoleClient(console).get(link.pathname + link.search);
    expect(again.status).toBe(401);
    expect(await again.text()).toContain('chatctx console');
  });

  it('refuses a link past its lifetime and a session past its idle time', async () => {
    const link = new URL(console.issueLink(CONSOLE_ORIGIN));
    clock += CONSOLE_LIMITS.linkTtlMs + 1;
    expect((await new ConsoleClient(console).get(link.pathname + link.search)).status).toBe(401);
    const client = new ConsoleClient(console);
    await client.signIn();
    expect((await client.page('/console/keys')).status).toBe(200);
    clock += CONSOLE_LIMITS.idleMs + 1;
    expect((await client.page('/console/keys')).status).toBe(401);
  });

  it('asks for a session on every page, and answers only loopback names', async () => {
    const stranger = new ConsoleClient(console);
    for (const path of ['/console/keys', '/console/queue', '/console/', '/console/nowhere']) {
      expect((await stranger.get(path)).status, path).toBe(401);
    }
    const client = new ConsoleClient(console);
    await client.signIn();
    const rebound = await console.fetch(new Request('http://attacker.example:4999/console/keys', { headers: { Cookie: client.cookie } }));
    expect(rebound.status).toBe(403);
  });

  it('sends a strict policy: no inline script or style, no framing, no caching, no referrer', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    const response = await client.get('/console/keys');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('refuses a form without the session token, or sent from another origin', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    await client.page('/console/keys');
    expect((await client.post('/console/keys', { name: 'no token', _csrf: '' })).status).toBe(403);
    expect((await client.post('/console/keys', { name: 'other origin' }, { Origin: 'https://attacker.example', 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    const keys = (await runAdminCommand(deps, { op: 'keys.list' })) as OwnerKeyInfo[];
    expect(keys.map((k) => k.name)).not.toContain('no token');
    expect(keys.map((k) => k.name)).not.toContain('other origin');
  });

  it('ends the session on sign-out', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    await client.page('/console/keys');
    expect((await client.post('/console/logout', {})).status).toBe(200);
    expect((await client.page('/console/keys')).status).toBe(401);
  });
});

describe('keys', () => {
  it('creates a key shown once, which authenticates until the console revokes it', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    await client.page('/console/keys');
    const created = await client.post('/console/keys', { name: 'console agent', daily_quota: '250', scope: ['public', 'feedback'] });
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/console/keys/new');
    const shown = await client.page('/console/keys/new');
    const key = /id="new-key"[^>]*value="([^"]+)"/.exec(shown.text)?.[1] ?? '';
    expect(shown.text).toContain('only time the key is shown');
    expect(shown.text).toContain(`Bearer ${key}`);
    expect((await client.get('/console/keys/new')).status).toBe(303);

    const repository = new KeyRepository(store.sql, deps.secrets);
    const active = await repository.resolve(key);
    expect(active?.dailyQuota).toBe(250);
    const listed = await client.page('/console/keys');
    expect(listed.text).toContain('console agent');
    expect(listed.text).toContain('250 per day');

    const id = active!.id;
    expect((await client.post(`/console/keys/${id}/revoke`, {})).status).toBe(303);
    expect(await repository.resolve(key)).toBeUndefined();
    const cli = (await runAdminCommand(deps, { op: 'keys.list' })) as OwnerKeyInfo[];
    expect(cli.find((k) => k.id === id)?.revoked_at).not.toBeNull();
    expect((await client.page('/console/keys?done=revoked')).text).toContain('Agents using it now get 401');
  });

  it('changes a quota, and says what is wrong with a bad one', async () => {
    const created = (await runAdminCommand(deps, { op: 'keys.create', name: 'cli key', daily_quota: null })) as OwnerKeyInfo;
    const client = new ConsoleClient(console);
    await client.signIn();
    await client.page('/console/keys');
    const bad = await client.post(`/console/keys/${created.id}/quota`, { daily_quota: 'lots' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('whole number');
    expect((await client.post(`/console/keys/${created.id}/quota`, { daily_quota: '40' })).status).toBe(303);
    const cli = (await runAdminCommand(deps, { op: 'keys.list' })) as OwnerKeyInfo[];
    expect(cli.find((k) => k.id === created.id)?.daily_quota).toBe(40);
    const unknown = await client.post('/console/keys/00000000-0000-4000-8000-000000000000/revoke', {});
    expect(unknown.status).toBe(404);
  });
});

describe('key scopes', () => {
  beforeAll(async () => {
    await createCollection(store.sql, 'internal', 'team-only guidance');
  });

  const listed = async (id: string) => ((await runAdminCommand(deps, { op: 'keys.list' })) as OwnerKeyInfo[]).find((k) => k.id === id)!;

  it('offers every collection and feedback when creating a key, and creates it with the ticked ones', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    const page = await client.page('/console/keys');
    expect(page.text).toMatch(/id="new-key-c-public" name="scope" value="public" checked/);
    expect(page.text).toMatch(/id="new-key-c-internal" name="scope" value="internal">/);
    expect(page.text).toMatch(/id="new-key-feedback" name="scope" value="feedback" checked/);

    const created = await client.post('/console/keys', { name: 'team agent', daily_quota: 'unlimited', scope: ['public', 'internal'] });
    expect(created.status).toBe(303);
    const shown = await client.page('/console/keys/new');
    expect(shown.text).toContain('Scopes: public, internal.');
    const key = /id="new-key"[^>]*value="([^"]+)"/.exec(shown.text)?.[1] ?? '';
    const active = await new KeyRepository(store.sql, deps.secrets).resolve(key);
    expect(active?.scope).toEqual({ collections: [1, 2], feedback: false });
    expect((await client.page('/console/keys')).text).toContain('<td>public, internal</td>');
  });

  it("changes a key's scopes from its row: ticked ones kept or added, the rest removed", async () => {
    const key = (await runAdminCommand(deps, { op: 'keys.create', name: 'row agent', daily_quota: null })) as OwnerKeyInfo;
    const client = new ConsoleClient(console);
    await client.signIn();
    const page = await client.page('/console/keys');
    expect(page.text).toContain(`action="/console/keys/${key.id}/scope"`);
    expect(page.text).toContain('<legend>Scopes of row agent</legend>');

    expect((await client.post(`/console/keys/${key.id}/scope`, { scope: ['internal', 'feedback'] })).status).toBe(303);
    expect(await listed(key.id)).toMatchObject({ collections: ['internal'], feedback: true });
    expect((await client.page('/console/keys?done=scope')).text).toContain('its OAuth tokens follow');

    expect((await client.post(`/console/keys/${key.id}/scope`, { scope: ['public', 'internal'] })).status).toBe(303);
    expect(await listed(key.id)).toMatchObject({ collections: ['public', 'internal'], feedback: false });
  });

  it('refuses a key with no collection, and an unknown one, saying what to do and changing nothing', async () => {
    const key = (await runAdminCommand(deps, { op: 'keys.create', name: 'kept agent', daily_quota: null })) as OwnerKeyInfo;
    const client = new ConsoleClient(console);
    await client.signIn();
    await client.page('/console/keys');
    const none = await client.post(`/console/keys/${key.id}/scope`, { scope: ['feedback'] });
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('at least one collection');
    const unknown = await client.post(`/console/keys/${key.id}/scope`, { scope: ['public', 'secret-stuff'] });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('No collection is named &quot;secret-stuff&quot;');
    expect(await listed(key.id)).toMatchObject({ collections: ['public'], feedback: true });

    const empty = await client.post('/console/keys', { name: 'no collection', daily_quota: 'unlimited', scope: ['feedback'] });
    expect(empty.status).toBe(400);
    const text = await empty.text();
    expect(text).toContain('Tick at least one collection');
    expect(text).toContain('value="no collection"');
    expect(((await runAdminCommand(deps, { op: 'keys.list' })) as OwnerKeyInfo[]).map((k) => k.name)).not.toContain('no collection');
  });
});

describe('notices', () => {
  it('shows only the notices a page knows, whatever the address says', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    for (const path of ['/console/keys', '/console/queue', '/console/feedback', '/console/records']) {
      const page = await client.page(`${path}?done=toString`);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toContain('role="status"');
    }
  });
});
