/**
 * The owner console in a real browser (Debian's Chromium through playwright-core)
 * against a running local server, with the sign-in link printed by the real CLI
 * (`chatctx --json console`): the door (single-use link, cookie flags, a reused or
 * made-up link refused), keys created, used by an MCP client, revoked after the
 * confirmation dialog and then refused with 401, forged cross-site forms refused,
 * keyboard-only use, no horizontal scroll at 320 px, axe-core (WCAG 2.2 AA) on every
 * page the navigation links to and the JavaScript each page loads.
 *
 * One server and one browser for the file; one signed-in context is reused by the
 * tests that only need a session, and the door tests open fresh ones.
 *
 * The review-queue and analytics tests need pages built on other branches; each is
 * guarded by whether the console on this checkout serves its route (asked in process
 * at collection time), so they run by themselves once those pages are merged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CLI, REPO_ROOT, makeDataDir, runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { connectClient, post, toolCall } from '../support/mcp-client.ts';
import { axe, freshContext, launchBrowser } from '../support/browser.ts';
import { reviewedRecord } from '../support/records.ts';
import type { OwnerKeyInfo } from '../../lambdas/admin/key-scopes.ts';

const ENV = { CHATCTX_EMBEDDINGS: 'none' };
const JS_BUDGET_BYTES = 100 * 1024;

/** The page's cumulative layout shift since it began loading (Chromium's layout-shift entries, input-driven ones left out). */
async function layoutShift(page: import('playwright-core').Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let total = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[]) {
            if (!entry.hadRecentInput) total += entry.value;
          }
        }).observe({ type: 'layout-shift', buffered: true });
        setTimeout(() => resolve(total), 200);
      }),
  );
}


let server: TestServer;
let browser: Browser;
let work: string;
/** The owner's signed-in context, shared by the tests that only need a session. */
let owner: BrowserContext;
let page: Page;
let origin: string;

const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args], ENV);

/** A fresh single-use link, from the real CLI asking the running server. */
async function consoleLink(): Promise<string> {
  const run = await cli('--json', 'console');
  expect(run.code, run.stderr).toBe(0);
  const printed = JSON.parse(run.stdout) as { url: string; served_by: string };
  expect(printed.served_by).toMatch(/^the server/);
  return printed.url;
}

async function keyNames(): Promise<string[]> {
  const run = await cli('--json', 'keys', 'list');
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as OwnerKeyInfo[]).map((k) => k.name);
}

/** Creates a key with the console's form and returns it as the new-key page shows it. */
async function createKey(on: Page, name: string, quota = 'unlimited', at = origin): Promise<string> {
  await on.goto(`${at}/console/keys`);
  await on.getByLabel('Name (who or what uses the key)').fill(name);
  await on.getByLabel('Daily quota', { exact: true }).fill(quota);
  await Promise.all([on.waitForURL(`${at}/console/keys/new`), on.getByRole('button', { name: 'Create key' }).click()]);
  return on.locator('#new-key').inputValue();
}

/** The paths the console's navigation links to, as the page shows them. */
async function navPaths(on: Page): Promise<string[]> {
  await on.goto(`${origin}/console/keys`);
  return on.locator('nav[aria-label="Console"] a').evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
}

interface ConsoleAlone {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly printed: { url: string; served_by: string };
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

/**
 * `chatctx --json console` on a data directory no server holds: it opens the store and
 * serves the console itself. Started beside the server, as opening a new store takes a while.
 */
async function consoleAlone(): Promise<ConsoleAlone> {
  const dir = await makeDataDir();
  const env = { ...ENV, CHATCTX_STARTER_CORPUS: '0' };
  const child = spawn(process.execPath, [CLI, '--data-dir', dir, '--json', 'console'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  try {
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('\n')) resolve(output.slice(0, output.indexOf('\n')));
      });
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      child.once('exit', (code) => reject(new Error(`chatctx console exited with ${code}:\n${output}`)));
    });
    return { dir, env, printed: JSON.parse(line) as ConsoleAlone['printed'], child, exited };
  } catch (error) {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
let alone: Promise<ConsoleAlone> | undefined;

const guidanceCall = (key: string) => post(server.url, toolCall('get_guidance', { ids: ['use-keyset-pagination-instead-of-large-offset'] }), { Authorization: `Bearer ${key}` });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'chatctx-console-'));
  alone = consoleAlone();
  alone.catch(() => undefined);
  [server, browser] = await Promise.all([startPreparedServer(ENV), launchBrowser()]);
  owner = await freshContext(browser);
  page = await owner.newPage();
  const link = await consoleLink();
  origin = new URL(link).origin;
  await page.goto(link);
}, 300_000);

afterAll(async () => {
  const left = await alone?.catch(() => undefined);
  if (left) {
    if (left.child.exitCode === null) left.child.kill('SIGKILL');
    await left.exited;
    await rm(left.dir, { recursive: true, force: true });
  }
  await browser?.close();
  await server?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the door', () => {
  it('opens with the printed link on the review queue, the token gone from the address bar, behind an HttpOnly SameSite=Strict cookie', async () => {
    const context = await freshContext(browser);
    const tab = await context.newPage();
    const link = await consoleLink();
    expect(new URL(link).hostname).toBe('127.0.0.1');
    await tab.goto(link);
    const landed = new URL(tab.url());
    expect(landed.pathname).toBe('/console/queue');
    expect(landed.search).toBe('');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'chatctx_console', path: '/console', httpOnly: true, sameSite: 'Strict' });
    expect((await tab.goto(`${origin}/console/keys`))!.status()).toBe(200);
    await context.close();
  });

  it('refuses a link used before, or one it never issued, with "Sign in again" and 401', async () => {
    const context = await freshContext(browser);
    const tab = await context.newPage();
    const link = await consoleLink();
    await tab.goto(link);
    for (const url of [link, `${origin}/console/login?token=${'A'.repeat(43)}`]) {
      const stranger = await freshContext(browser);
      const other = await stranger.newPage();
      const response = await other.goto(url);
      expect(response!.status(), url).toBe(401);
      expect(await other.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in again');
      expect(await other.content()).toContain('chatctx console');
      expect(await axe(other)).toEqual([]);
      expect((await other.goto(`${origin}/console/keys`))!.status()).toBe(401);
      await stranger.close();
    }
    await context.close();
  });

  it('refuses forms posted by a page on another origin, even one carrying the session token, and creates nothing', async () => {
    await page.goto(`${origin}/console/keys`);
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const forms: Record<string, string> = { guessed: 'not-the-token', leaked: token };
    // Another port on the same loopback address: same site, so the SameSite=Strict cookie goes along; only the checks refuse it.
    const attacker: Server = createServer((req, res) => {
      const csrf = forms[(req.url ?? '').slice(1)] ?? '';
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>win a prize</title>
<form method="post" action="${origin}/console/keys"><input name="_csrf" value="${csrf}"><input name="name" value="forged ${req.url}"><input name="daily_quota" value="unlimited"></form>
<script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const evil = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    try {
      for (const name of Object.keys(forms)) {
        const tab = await owner.newPage();
        const [answer] = await Promise.all([
          tab.waitForResponse((r) => r.url() === `${origin}/console/keys` && r.request().method() === 'POST'),
          tab.goto(`${evil}/${name}`),
        ]);
        expect(answer.status(), name).toBe(403);
        expect(await answer.text()).toContain('did not come from this console');
        await tab.close();
      }
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
    }
    expect((await keyNames()).filter((n) => n.startsWith('forged'))).toEqual([]);
    // The session itself still works.
    expect((await page.goto(`${origin}/console/keys`))!.status()).toBe(200);
  });

  it('with no server running, `chatctx console` serves the console itself, other commands go through it, and Ctrl+C stops it', async () => {
    const { dir, env, printed, child, exited } = await alone!;
    expect(printed.served_by).toBe('this command');
    const own = new URL(printed.url).origin;
    const context = await freshContext(browser);
    const tab = await context.newPage();
    await tab.goto(printed.url);
    expect(new URL(tab.url()).pathname).toBe('/console/queue');
    expect(await createKey(tab, 'served by the command', 'unlimited', own)).toMatch(/^kb_live_/);
    const listed = await runCli(['--data-dir', dir, '--json', 'keys', 'list'], env);
    expect((JSON.parse(listed.stdout) as OwnerKeyInfo[]).map((k) => k.name)).toEqual(['served by the command']);
    await context.close();
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect(fetch(`${own}/console/keys`)).rejects.toThrow();
  });
});

describe('keys', () => {
  it('creates a key shown once, which an MCP client can use until it is revoked in the console (after the confirmation)', async () => {
    const key = await createKey(page, 'browser agent', '50');
    expect(key).toMatch(/^kb_live_/);
    expect(await page.locator('#snippet-claude').textContent()).toContain(`Bearer ${key}`);
    await page.goto(`${origin}/console/keys/new`);
    expect(new URL(page.url()).pathname).toBe('/console/keys');
    expect(await page.content()).not.toContain(key);

    const client = await connectClient(server.url, key);
    const answer = (await client.callTool({ name: 'get_guidance', arguments: { ids: ['use-keyset-pagination-instead-of-large-offset'] } })).structuredContent as { results: unknown[] };
    expect(answer.results).toHaveLength(1);
    await client.close();
    expect((await guidanceCall(key)).status).toBe(200);

    const revoke = page.getByRole('button', { name: 'Revoke browser agent' });
    page.once('dialog', (dialog) => void dialog.dismiss());
    await revoke.click();
    expect(new URL(page.url()).pathname).toBe('/console/keys');
    expect((await guidanceCall(key)).status).toBe(200);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await Promise.all([page.waitForURL(`${origin}/console/keys?done=revoked`), revoke.click()]);
    expect(asked).toBe('Revoke browser agent?');
    expect(await page.getByRole('status').textContent()).toContain('Agents using it now get 401');
    expect((await guidanceCall(key)).status).toBe(401);
  });

  it('works from the keyboard alone: Tab reaches the skip link, the navigation and the form, and Enter submits it', async () => {
    const tab = await owner.newPage();
    await tab.goto(`${origin}/console/keys`);
    const focused = () => tab.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el ? el.id || el.textContent?.trim() || el.tagName : '';
    });
    const order: string[] = [];
    for (let i = 0; i < 20 && order.at(-1) !== 'key-name'; i++) {
      await tab.keyboard.press('Tab');
      order.push(await focused());
    }
    expect(order[0]).toBe('Skip to content');
    const nav = ['Review queue', 'Records', 'Collections', 'Keys', 'Feedback', 'Analytics'];
    expect(order.slice(1, 1 + nav.length)).toEqual(nav);
    expect(order.at(-1)).toBe('key-name');

    // The skip link jumps over the navigation to the page's own content.
    await tab.goto(`${origin}/console/keys`);
    await tab.keyboard.press('Tab');
    await tab.keyboard.press('Enter');
    expect(await focused()).toBe('main');
    await tab.keyboard.press('Tab');
    expect(await focused()).toBe('key-name');
    await tab.keyboard.type('keyboard key');
    await Promise.all([tab.waitForURL(`${origin}/console/keys/new`), tab.keyboard.press('Enter')]);
    expect(await tab.locator('#new-key').inputValue()).toMatch(/^kb_live_/);
    expect(await keyNames()).toContain('keyboard key');
    await tab.close();
  });
});

describe('every page', () => {
  it('has no serious or critical axe violations (WCAG 2.2 AA), no layout shift and under 100 KB of JavaScript: each page the navigation links to, a search, a record and the new-key page', async () => {
    const tab = await owner.newPage();
    const paths = await navPaths(tab);
    expect(paths).toContain('/console/keys');
    const visit = async (label: string, open: () => Promise<unknown>) => {
      // Counted from the last page load on (creating a key passes through the keys page first).
      let scripts: Promise<number>[] = [];
      const onNavigated = (frame: import('playwright-core').Frame) => {
        if (frame === tab.mainFrame()) scripts = [];
      };
      const onResponse = (response: import('playwright-core').Response) => {
        if (response.request().resourceType() === 'script') scripts.push(response.body().then((body) => body.length));
      };
      tab.on('framenavigated', onNavigated);
      tab.on('response', onResponse);
      await open();
      await tab.waitForLoadState('load');
      tab.off('framenavigated', onNavigated);
      tab.off('response', onResponse);
      const scriptBytes = (await Promise.all(scripts)).reduce((sum, n) => sum + n, 0);
      expect(await axe(tab), label).toEqual([]);
      expect(scriptBytes, label).toBeLessThan(JS_BUDGET_BYTES);
      expect(await layoutShift(tab), label).toBeLessThan(0.001);
      return scriptBytes;
    };
    const weights: Record<string, number> = {};
    for (const path of paths) {
      weights[path] = await visit(path, async () => expect((await tab.goto(origin + path))!.status(), path).toBe(200));
    }
    // Pages the navigation leads to in one more step: an owner's search with its retrieval details, and a record's page.
    const search = '/console/records?q=' + encodeURIComponent('http client request timeout');
    weights[search] = await visit(search, async () => expect((await tab.goto(origin + search))!.status()).toBe(200));
    const record = await tab.locator('a[href^="/console/records/"]').first().getAttribute('href');
    expect(record).toBeTruthy();
    weights[record!] = await visit(record!, async () => expect((await tab.goto(origin + record!))!.status()).toBe(200));
    weights['/console/keys/new'] = await visit('/console/keys/new', () => createKey(tab, 'axe scan key'));
    expect(weights['/console/keys']).toBeGreaterThan(0);
    expect(weights['/console/keys/new']).toBe(weights['/console/keys']);
    await tab.close();
  });

  it('fits a 320 px wide screen without scrolling sideways: each page the navigation links to, and the new-key page', async () => {
    const tab = await owner.newPage();
    const paths = await navPaths(tab);
    await tab.setViewportSize({ width: 320, height: 800 });
    const width = () => tab.evaluate(() => document.documentElement.scrollWidth);
    for (const path of paths) {
      await tab.goto(origin + path);
      expect(await width(), path).toBeLessThanOrEqual(320);
    }
    await createKey(tab, 'a key with a rather long name to see how the narrow page wraps it');
    expect(await width(), '/console/keys/new').toBeLessThanOrEqual(320);
    await tab.goto(`${origin}/console/keys`);
    expect(await width(), '/console/keys with keys listed').toBeLessThanOrEqual(320);
    await tab.close();
  });
});

describe('review queue', () => {
  it('approves a candidate with a failing gate through an override, and agents then get it from get_guidance', async () => {
    const slug = 'browser-reviewed-2009';
    const file = join(work, `${slug}.json`);
    await writeFile(file, JSON.stringify(reviewedRecord(slug, { reviewed_at: '2009-06-01' })));
    const imported = await cli('records', 'import', file);
    expect(imported.code, imported.stderr).toBe(0);
    const agent = await connectClient(server.url);
    const guidance = async () => (await agent.callTool({ name: 'get_guidance', arguments: { ids: [slug] } })).structuredContent as { results: { slug: string }[]; missing: string[] };
    expect((await guidance()).missing).toEqual([slug]);

    await page.goto(`${origin}/console/queue`);
    await Promise.all([page.waitForURL(`${origin}/console/queue/${slug}`), page.locator(`a[href="/console/queue/${slug}"]`).first().click()]);
    expect(await axe(page)).toEqual([]);
    expect(await page.locator('main').textContent()).toContain('freshness');
    const approve = page.locator('form').filter({ has: page.getByRole('button', { name: 'Approve', exact: true }) });
    await approve.locator('[name="reviewer"]').fill('browser owner');
    await approve.locator('input[name="override"][value="freshness"]').check();
    await approve.locator('textarea[name="reason_freshness"]').fill('Re-read against the current documentation; still accurate.');
    const [sent] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().startsWith(`${origin}/console/queue`)),
      approve.getByRole('button', { name: 'Approve', exact: true }).click(),
    ]);
    expect(sent.status()).toBeLessThan(400);
    await page.waitForLoadState('load');

    expect((await guidance()).results.map((r) => r.slug)).toEqual([slug]);
    const shown = await cli('--json', 'records', 'show', slug);
    expect(JSON.parse(shown.stdout).approval).toMatchObject({ approved_by: 'browser owner', overrides: [{ gate: 'freshness' }] });
    await agent.close();
  });
});

describe('analytics', () => {
  it('shows the counts of a scripted set of searches, the same as chatctx analytics', async () => {
    const count = async (name: string) => Number((await page.locator(`li[data-count="${name}"] strong`).first().textContent())?.replace(/\D/g, ''));
    await page.goto(`${origin}/console/analytics`);
    const before = { searches: await count('searches'), noMatch: await count('no_match') };
    const agent = await connectClient(server.url);
    const questions = [
      { query: 'keyset pagination instead of a large offset' },
      { query: 'hash passwords with argon2id or bcrypt' },
      { query: 'GenServer supervision trees for umbrella apps', technologies: ['Elixir'] },
      { query: 'Ecto changeset cast_assoc with nested GenServer state', technologies: ['Elixir'], topic: 'data' },
    ];
    let noMatch = 0;
    for (const question of questions) {
      const answer = (await agent.callTool({ name: 'search_knowledge', arguments: question })).structuredContent as { retrieval: { mode: string } };
      if (answer.retrieval.mode === 'no_match') noMatch++;
    }
    await agent.close();
    expect(noMatch).toBeGreaterThan(0);
    // Search events are written in batches (within a second when idle): reload until they are in; the ceiling is for a busy machine.
    await expect
      .poll(async () => {
        await page.reload();
        return { searches: await count('searches'), noMatch: await count('no_match') };
      }, { timeout: 120_000 })
      .toEqual({ searches: before.searches + questions.length, noMatch: before.noMatch + noMatch });
    const report = await cli('--json', 'analytics');
    const cliCounts = JSON.parse(report.stdout) as { searches: number; modes: { no_match: { count: number } } };
    expect({ searches: cliCounts.searches, noMatch: cliCounts.modes.no_match.count }).toEqual({ searches: await count('searches'), noMatch: await count('no_match') });
    expect(await axe(page)).toEqual([]);
  });
});
