/**
 * `chatctx records draft --from-url` as an owner runs it: the real CLI as a child
 * process, fetching from a local https server whose self-signed certificate the
 * child trusts through NODE_EXTRA_CA_CERTS. It writes a draft the owner completes,
 * and refuses plain http, oversize and slow pages, redirects to http, a loopback
 * address unless private addresses are allowed, and an existing file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, makeDataDir, runCli } from '../support/local-server.ts';

const MAX_BYTES = 4096;

const GUIDE = `<!doctype html>
<html lang="en"><head>
  <meta charset="utf-8">
  <title>Timeouts | Example Docs</title>
  <meta property="og:title" content="Put a deadline on every outbound call">
  <meta property="og:site_name" content="Example Engineering Docs">
  <script>window.analytics = "tracking script text that must not appear anywhere";</script>
  <style>p { color: red } /* stylesheet text that must not appear */</style>
</head><body>
  <header><p>Site header: sign in to see your saved pages and other things.</p></header>
  <nav><ul><li>Navigation link to the getting started guide for new readers</li></ul></nav>
  <main>
    <h1>Deadlines</h1>
    <p>A background job that calls another service waits forever when that service never answers.</p>
    <p>Give every outbound call a deadline, and treat reaching it as an ordinary failure that is retried or reported.</p>
    <ul><li>Choose the deadline from the caller's own budget, not from the callee's typical latency.</li><li>Short.</li></ul>
    <p>Deadlines compose: a call made while handling a request gets what is left of that request's budget. This keeps
      a slow dependency from holding workers long after the original caller gave up, and it means one setting at the
      edge bounds the whole chain of calls beneath it, however deep that chain happens to be in practice today.</p>
  </main>
  <footer><p>Footer: copyright the example organisation, all rights reserved, every year.</p></footer>
</body></html>`;

let work: string;
let server: Server;
let base: string;
let env: Record<string, string>;

/** Answers each test page; the slow one holds its answer past the CLI's time limit. */
function route(path: string, res: import('node:http').ServerResponse): void {
  const html = { 'content-type': 'text/html; charset=utf-8' };
  if (path === '/guide') {
    res.writeHead(200, { ...html, 'content-length': Buffer.byteLength(GUIDE) }).end(GUIDE);
  } else if (path === '/big-announced') {
    const body = `<p>${'x'.repeat(MAX_BYTES * 2)}</p>`;
    res.writeHead(200, { ...html, 'content-length': Buffer.byteLength(body) }).end(body);
  } else if (path === '/big-chunked') {
    res.writeHead(200, html); // no content-length: sent chunked
    for (let i = 0; i < 8; i++) res.write(`<p>${'y'.repeat(1000)}</p>`);
    res.end();
  } else if (path === '/slow') {
    // Far past the CLI's 1 s limit: a draft that waited for it would outlast no test ceiling, but would succeed.
    setTimeout(() => res.writeHead(200, html).end(GUIDE), 60_000).unref();
  } else if (path === '/to-http') {
    res.writeHead(302, { location: `${base.replace('https:', 'http:')}/guide` }).end();
  } else {
    res.writeHead(404, html).end('<p>not here</p>');
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'chatctx-draft-'));
  const [key, cert] = [join(work, 'key.pem'), join(work, 'cert.pem')];
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-days', '1', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  server = createServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => route(req.url ?? '/', res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The test server is on loopback, which drafts read only when the owner allows private addresses.
  env = { NODE_EXTRA_CA_CERTS: cert, CHATCTX_DRAFT_MAX_BYTES: String(MAX_BYTES), CHATCTX_DRAFT_TIMEOUT_SECONDS: '1', CHATCTX_SOURCES_PRIVATE_ADDRESSES: '1' };
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(work, { recursive: true, force: true });
});

const draft = (url: string, out: string, ...flags: string[]) => runCli([...flags, 'records', 'draft', '--from-url', url, '--out', out], env);

describe('chatctx records draft --from-url', () => {
  it('writes a draft citing the page, with its title, publisher and passages, that import refuses until completed', async () => {
    // Prepare
    const out = join(work, 'guide.json');

    // Act
    const result = await draft(`${base}/guide`, out);

    // Assess
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(out);
    expect(result.stdout).toContain('Put a deadline on every outbound call');
    expect(result.stdout).toContain('Example Engineering Docs');
    expect(result.stdout).toMatch(/4 candidate evidence passage/);
    expect(result.stdout).toContain(`chatctx records import ${out}`);
    const written = await readFile(out, 'utf8');
    const record = JSON.parse(written);
    expect(record).toMatchObject({
      slug: 'put-a-deadline-on-every-outbound-call',
      title: 'Put a deadline on every outbound call',
      recommendation: '',
      sources: [{ url: `${base}/guide`, publisher: 'Example Engineering Docs', relation: 'supports' }],
    });
    expect(record.sources[0].evidence_excerpt).toBe(record._evidence_candidates[0]);
    expect(record._evidence_candidates[0]).toBe('A background job that calls another service waits forever when that service never answers.');
    for (const passage of record._evidence_candidates as string[]) {
      expect(passage.split(/\s+/).length).toBeGreaterThanOrEqual(8);
      expect(passage.split(/\s+/).length).toBeLessThanOrEqual(50);
    }
    for (const noise of ['tracking script', 'stylesheet', 'Site header', 'Navigation link', 'Footer', 'Short.']) expect(written).not.toContain(noise);

    const dataDir = await makeDataDir();
    try {
      const imported = await runCli(['--data-dir', dataDir, 'records', 'import', out], { CHATCTX_EMBEDDINGS: 'none' });
      expect(imported.code).toBe(1);
      expect(imported.stderr).toMatch(/nothing was imported/);
      expect(imported.stderr).toMatch(/guide\.json: recommendation:/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('prints a JSON summary with --json, and writes SLUG.json in the current folder without --out', async () => {
    // Prepare
    const here = await mkdtemp(join(work, 'cwd-'));

    // Act
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, '--json', 'records', 'draft', '--from-url', `${base}/guide`], { cwd: here, env: { ...process.env, ...env } });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.on('exit', (code) => resolve({ code, stdout }));
    });

    // Assess
    expect(result.code).toBe(0);
    const file = join(here, 'put-a-deadline-on-every-outbound-call.json');
    expect(JSON.parse(result.stdout)).toEqual({
      file,
      title: 'Put a deadline on every outbound call',
      publisher: 'Example Engineering Docs',
      url: `${base}/guide`,
      passages: 4,
    });
    expect(existsSync(file)).toBe(true);
  });

  it('refuses a page on a loopback address unless the owner allows private addresses', async () => {
    const out = join(work, 'private.json');
    const result = await runCli(['records', 'draft', '--from-url', `${base}/guide`, '--out', out], { ...env, CHATCTX_SOURCES_PRIVATE_ADDRESSES: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/resolves to a loopback or private address, which drafts do not read \(set CHATCTX_SOURCES_PRIVATE_ADDRESSES=1/);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a plain http address and writes nothing', async () => {
    const out = join(work, 'http.json');
    const result = await draft(`${base.replace('https:', 'http:')}/guide`, out);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*only https pages can be drafted from\.$/m);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a redirect to http', async () => {
    const out = join(work, 'redirect.json');
    const result = await draft(`${base}/to-http`, out);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/redirects to http:\/\/.*, which is not https; only https pages can be drafted from/);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a page over the size limit, whether or not it announces its length', async () => {
    for (const path of ['big-announced', 'big-chunked']) {
      const out = join(work, `${path}.json`);
      const result = await draft(`${base}/${path}`, out);
      expect(result.code, path).toBe(1);
      expect(result.stderr, path).toMatch(new RegExp(`is larger than ${MAX_BYTES} bytes, the most a draft reads \\(CHATCTX_DRAFT_MAX_BYTES\\)`));
      expect(existsSync(out), path).toBe(false);
    }
  });

  it('gives up on a page that does not answer within the time limit', async () => {
    const out = join(work, 'slow.json');
    // No timing asserted: had the CLI waited, the page would have answered and the draft succeeded.
    const result = await draft(`${base}/slow`, out);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/did not answer within 1 second \(CHATCTX_DRAFT_TIMEOUT_SECONDS\)/);
    expect(existsSync(out)).toBe(false);
  });

  it('leaves an existing file as it is', async () => {
    const out = join(work, 'mine.json');
    await writeFile(out, '{"mine": true}\n');
    const result = await draft(`${base}/guide`, out);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/already exists; it was left as it is/);
    expect(await readFile(out, 'utf8')).toBe('{"mine": true}\n');
    expect((await readdir(work)).filter((name) => name.startsWith('put-a-deadline'))).toEqual([]);
  });
});
