/**
 * Evidence checks as an owner meets them on the local runtime: the server's
 * background checks (`CHATCTX_SOURCE_CHECK_INTERVAL_HOURS`) running soon after
 * start while the server keeps answering, then `chatctx records verify` through
 * the real CLI (a child process) answered by that server, and with no server. The pages are on a local HTTPS server whose self-signed
 * certificate the children trust through NODE_EXTRA_CA_CERTS; its loopback address
 * is allowed with CHATCTX_SOURCES_PRIVATE_ADDRESSES, as an owner allows an intranet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { startTlsServer, type TlsServer } from '../support/tls-server.ts';
import { reviewedRecord } from '../support/records.ts';
import { MCP_ACCEPT } from '../support/oauth-flow.ts';

const SENTENCE = 'Give every outbound call a deadline, and treat reaching it as an ordinary failure.';
let tls: TlsServer;
let dataDir: string;
let env: Record<string, string>;
let server: TestServer | undefined;

beforeAll(async () => {
  tls = await startTlsServer([], (req, res) => {
    const html = { 'content-type': 'text/html' };
    if (req.url === '/kept') return void res.writeHead(200, html).end(`<main><p>${SENTENCE}</p></main>`);
    if (req.url === '/rewritten') return void res.writeHead(200, html).end('<main><p>Every outbound call needs a deadline of its own.</p></main>');
    res.writeHead(404).end();
  });
  dataDir = await makeDataDir();
  env = {
    CHATCTX_DATA_DIR: dataDir,
    CHATCTX_EMBEDDINGS: 'none',
    CHATCTX_STARTER_CORPUS: '0',
    CHATCTX_SOURCES_PRIVATE_ADDRESSES: '1',
    NODE_EXTRA_CA_CERTS: tls.certPath,
  };
  const record = (slug: string, path: string) => ({
    ...reviewedRecord(slug),
    sources: [{ title: 'Deadlines', url: `https://127.0.0.1:${tls.port}${path}`, publisher: 'Example Docs', evidence_excerpt: SENTENCE, relation: 'supports' }],
  });
  const file = join(dataDir, '..', `${dataDir.split('/').pop()}-records.json`);
  await writeFile(file, JSON.stringify([record('deadline-kept', '/kept'), record('deadline-rewritten', '/rewritten')]));
  const imported = await runCli(['records', 'import', file], env);
  expect(imported.code, imported.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await tls?.close();
});

describe('background checks on the local server', () => {
  it('run soon after start when set, store what they found, and the server keeps answering meanwhile', async () => {
    server = await startServer({ ...env, CHATCTX_SOURCE_CHECK_INTERVAL_HOURS: '1' }, dataDir);
    // Answered while the first run is due or under way.
    const listed = await fetch(server.url, { method: 'POST', headers: MCP_ACCEPT, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(listed.status).toBe(200);
    await expect.poll(() => server!.output(), { timeout: 180_000, interval: 250 }).toMatch(/"event":"source_checks_done"[^\n]*"checked":2[^\n]*"problems":1/);
    const shown = await runCli(['--json', 'records', 'show', 'deadline-rewritten'], env);
    expect(JSON.parse(shown.stdout).source_checks).toEqual([expect.objectContaining({ status: 'drifted', how: 'fetched' })]);
  }, 300_000);
});

describe('records verify through the CLI, answered by the running server', () => {
  it('lists what is not verified with the closest passage, counts the rest, and exits 1', async () => {
    const result = await runCli(['records', 'verify'], env);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/^drifted +deadline-rewritten {2}https:\/\/127\.0\.0\.1:\d+\/rewritten closest passage \(\d+% alike\): "every outbound call needs a deadline of its own\."/m);
    expect(result.stdout).not.toMatch(/deadline-kept/);
    expect(result.stdout).toMatch(/2 source\(s\) checked: (1 verified, 1 drifted|1 drifted, 1 verified)/);
  });

  it('checks only the records named, and exits 0 when they are verified; --json gives every source', async () => {
    const result = await runCli(['--json', 'records', 'verify', 'deadline-kept'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ checked: 1, counts: { verified: 1 }, sources: [{ slugs: ['deadline-kept'], status: 'verified' }] });
  });

});

describe('records verify through the CLI, with no server', () => {
  it('refuses a loopback page unless private addresses are allowed', async () => {
    await server?.stop();
    server = undefined;
    const result = await runCli(['--json', 'records', 'verify', 'deadline-kept'], { ...env, CHATCTX_SOURCES_PRIVATE_ADDRESSES: '0' });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).sources[0]).toMatchObject({ status: 'unreachable', detail: expect.stringMatching(/not public/) });
  });
});
