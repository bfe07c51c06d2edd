/**
 * `npm run console:screenshots [-- --chromium PATH] [--out DIR] [--embeddings none]`
 *
 * Pictures of the owner console for the docs: starts `chatctx serve` on a temporary
 * data directory with the starter corpus (hybrid search once the background embedding
 * is done, unless `--embeddings none`), adds what the pages show
 * (a candidate record whose review date fails the freshness gate, an API key, a few
 * searches, one of them with no match, and a feedback item), opens the console with
 * the link `chatctx console` prints, and saves a 1280×900 PNG of every page the
 * navigation links to (a page that answers 404, not built yet, is left out), of the
 * first review-queue item when there is one, of the new-key page, and 320 px wide
 * ones of the review queue and the keys page. In the pictures the
 * header names a project's data directory instead of the temporary one, and the new
 * key reads as an example, so no key-shaped string lands in the docs.
 * The PNGs this script wrote before are removed first, so the folder matches the
 * console as it is. Needs Chromium (`apt-get install chromium`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { chromium, type Page } from 'playwright-core';
import { SETTINGS } from '../../lambdas/config/settings.ts';
import { validRecord } from '../bench/reviewed-records.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'bin', 'chatctx.js');

const opts = new Command('console-screenshots')
  .option('--chromium <path>', 'the Chromium executable', '/usr/bin/chromium')
  .option('--out <dir>', 'where the PNGs go', join(ROOT, 'docs', 'console'))
  .option('--embeddings <provider>', 'the embeddings provider of the server (none: keyword search only, quicker)', 'use-lite')
  .parse()
  .opts<{ chromium: string; out: string; embeddings: string }>();

const CHILD_ENV = { ...process.env, [SETTINGS.embeddings.env]: opts.embeddings };

/** A candidate an owner might write, reviewed long ago: the freshness gate fails (every other gate passes). */
const SAMPLE_SLUG = 'unref-timers-that-should-not-keep-a-nodejs-cli-alive';
const SAMPLE = {
  ...validRecord({
    slug: SAMPLE_SLUG,
    title: 'Unref timers that should not keep a Node.js command-line tool alive',
    summary: 'A pending interval or timeout keeps the event loop alive, so a CLI that finished its work never exits.',
    asked_as: ['my node script does not exit after it is done', 'setInterval keeps the node process running', 'cli hangs at the end until ctrl+c'],
    recommendation: 'Call unref() on timers that only do background work (refresh, heartbeat), so they never hold the process open once the real work is done.',
  }),
  reviewed_at: '2019-05-02',
};

const SEARCHES = [
  { query: 'keyset pagination instead of a large offset' },
  { query: 'hash passwords with argon2id or bcrypt' },
  { query: 'protect cookie sessions from CSRF with tokens', topic: 'security' },
  { query: 'GenServer supervision trees for umbrella apps', technologies: ['Elixir'] },
];

function cli(dataDir: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, ...args], { cwd: ROOT, env: CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`chatctx ${args.join(' ')} exited with ${code}: ${err}`))));
  });
}

async function serve(dataDir: string): Promise<{ child: ChildProcess; mcpUrl: string }> {
  const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, 'serve', '--port', '0', '--host', '127.0.0.1'], { cwd: ROOT, env: CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const mcpUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${out}`)), 240_000);
    const seen = (d: Buffer) => {
      out += d.toString();
      const url = /serving MCP at (\S+\/mcp)/.exec(out)?.[1];
      // With embeddings, the starter corpus is embedded in the background: searches are hybrid once it is done.
      const settled = opts.embeddings === 'none' || /"event":"(embeddings_current|embedding_failed)"/.test(out);
      if (url && settled) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${out}`)));
  });
  return { child, mcpUrl };
}

async function tool(mcpUrl: string, name: string, args: Record<string, unknown>): Promise<void> {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  await response.text();
  if (!response.ok) throw new Error(`${name} answered ${response.status}`);
}

/** What the pages show: a failing candidate, a key, searches and a feedback item. */
async function populate(work: string, dataDir: string, mcpUrl: string): Promise<void> {
  const file = join(work, `${SAMPLE_SLUG}.json`);
  await writeFile(file, JSON.stringify(SAMPLE, null, 2));
  await cli(dataDir, 'records', 'import', file);
  await rm(file);
  await cli(dataDir, 'keys', 'create', '--name', 'ci smoke check', '--daily-quota', '500');
  for (const search of SEARCHES) await tool(mcpUrl, 'search_knowledge', search);
  await tool(mcpUrl, 'submit_feedback', { category: 'outdated', record: 'hash-passwords-with-argon2id-or-bcrypt', source: 'search_knowledge', comment: 'Mentions an older cost parameter.' });
  // Search events are written within a second; the analytics page should count them.
  await new Promise((resolve) => setTimeout(resolve, 1500));
}

/** Shown in the header instead of the temporary data directory's path. */
const SHOWN_DATA_DIR = '~/my-project/.chatctx';
/** Shown instead of the new key (in its field and the client set-ups), so no key-shaped string lands in the docs. */
const SHOWN_KEY = 'kb_live_EXAMPLE-shown-once-copy-it-now';

/** Pictures taller than this are cut (the records list runs to every record in the store). */
const MAX_SHOT_HEIGHT = 2400;

async function shoot(page: Page, out: string, name: string): Promise<string> {
  await page.waitForLoadState('load');
  await page.evaluate(
    ({ dir, example }) => {
      const target = document.querySelector('.target');
      if (target) target.textContent = dir;
      const field = document.querySelector<HTMLInputElement>('#new-key');
      if (!field) return;
      const key = field.value;
      field.value = example;
      for (const pre of document.querySelectorAll('pre')) pre.textContent = (pre.textContent ?? '').split(key).join(example);
    },
    { dir: SHOWN_DATA_DIR, example: SHOWN_KEY },
  );
  const path = join(out, `${name}.png`);
  // The whole page, cut at a height that keeps a long list (every record) a readable picture.
  const height = Math.min(await page.evaluate(() => document.documentElement.scrollHeight), MAX_SHOT_HEIGHT);
  const width = page.viewportSize()?.width ?? 1280;
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width, height }, animations: 'disabled' });
  return `${name}.png`;
}

async function main(): Promise<void> {
  if (!existsSync(opts.chromium)) throw new Error(`no Chromium at ${opts.chromium}: install it (apt-get install chromium) or pass --chromium PATH`);
  const work = await mkdtemp(join(tmpdir(), 'chatctx-screens-'));
  const dataDir = join(work, 'data');
  await mkdir(dataDir);
  const { child, mcpUrl } = await serve(dataDir);
  const browser = await chromium.launch({
    executablePath: opts.chromium,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await populate(work, dataDir, mcpUrl);
    await mkdir(opts.out, { recursive: true });
    for (const old of (await readdir(opts.out)).filter((f) => f.endsWith('.png'))) await rm(join(opts.out, old));
    const link = (JSON.parse(await cli(dataDir, '--json', 'console')) as { url: string }).url;
    const origin = new URL(link).origin;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(link);
    await page.goto(`${origin}/console/keys`);
    const paths = await page.locator('nav[aria-label="Console"] a').evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
    const saved: string[] = [];
    const skipped: string[] = [];
    for (const path of paths) {
      const response = await page.goto(origin + path);
      if (response?.status() === 404) {
        skipped.push(path);
        continue;
      }
      const name = path.replace(/^\/console\//, '');
      saved.push(await shoot(page, opts.out, name));
      if (name === 'records') {
        // An owner's search, with the retrieval details an agent never sees.
        const question = encodeURIComponent('my node script does not exit after it is done');
        if ((await page.goto(`${origin}/console/records?q=${question}`))?.status() === 200) saved.push(await shoot(page, opts.out, 'records-search'));
        const record = await page.locator('main a[href^="/console/records/"]').first().getAttribute('href').catch(() => null);
        if (record && (await page.goto(origin + record))?.status() === 200) saved.push(await shoot(page, opts.out, 'record'));
      }
      if (name === 'queue') {
        const item = await page.locator('main a[href^="/console/queue/"]').first().getAttribute('href').catch(() => null);
        if (item && (await page.goto(origin + item))?.status() === 200) saved.push(await shoot(page, opts.out, 'queue-item'));
      }
    }
    await page.goto(`${origin}/console/keys`);
    await page.getByLabel('Name (who or what uses the key)').fill('docs example');
    await Promise.all([page.waitForURL(`${origin}/console/keys/new`), page.getByRole('button', { name: 'Create key' }).click()]);
    saved.push(await shoot(page, opts.out, 'keys-new'));
    await page.setViewportSize({ width: 320, height: 900 });
    for (const narrow of ['queue', 'keys']) {
      if (skipped.includes(`/console/${narrow}`)) continue;
      await page.goto(`${origin}/console/${narrow}`);
      saved.push(await shoot(page, opts.out, `${narrow}-320`));
    }
    console.log(`saved ${saved.join(', ')} in ${opts.out}${skipped.length ? `; not built yet (404): ${skipped.join(', ')}` : ''}`);
  } finally {
    await browser.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await rm(work, { recursive: true, force: true });
  }
}

await main();
