/**
 * The `chatctx` CLI as a user runs it: a child process on a data directory with no
 * server running (it opens the store itself), clear errors and non-zero exits on
 * bad input, and imports that land whole or not at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile, mkdir, readFile, readdir } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CLI, REPO_ROOT, makeDataDir, preparedDataDir, runCli, startServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import { reviewedRecord } from '../support/records.ts';

let dataDir: string;
let work: string;
const cli = (...args: string[]) => runCli(['--data-dir', dataDir, ...args]);
/** For the servers of tests about something other than search: none waits for the encoder to embed the starter corpus. */
const NO_EMBEDDINGS = { CHATCTX_EMBEDDINGS: 'none' };

const record = (slug: string, extra: Record<string, unknown> = {}) => reviewedRecord(slug, extra);

beforeAll(async () => {
  dataDir = await makeDataDir();
  work = await mkdtemp(join(tmpdir(), 'chatctx-cli-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('chatctx keys (no server running)', () => {
  it('creates a key, prints it once with its id, and never lists the plaintext', async () => {
    const created = await cli('keys', 'create', '--name', 'ci bot', '--daily-quota', '100');
    expect(created.code).toBe(0);
    const key = /kb_live_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0];
    const id = /Created key ([0-9a-f-]{36})/.exec(created.stdout)?.[1];
    expect(key).toBeDefined();
    expect(created.stdout).toContain(`chatctx keys revoke ${id}`);
    const listed = await cli('keys', 'list');
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('100/day');
    expect(listed.stdout).not.toContain(key);
  });

  it('creates the pepper file with mode 0600', async () => {
    const { mode } = await import('node:fs').then((fs) => fs.statSync(join(dataDir, 'pepper')));
    expect(mode & 0o777).toBe(0o600);
  });

  it('fails clearly on bad input', async () => {
    const noName = await cli('keys', 'create');
    expect(noName.code).not.toBe(0);
    expect(noName.stderr).toMatch(/--name/);
    const badQuota = await cli('keys', 'create', '--name', 'x', '--daily-quota', '-3');
    expect(badQuota.code).not.toBe(0);
    expect(badQuota.stderr).toMatch(/whole number/);
    const unknown = await cli('keys', 'revoke', '00000000-0000-0000-0000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: No API key has that id.\n$/m);
    const unknownQuota = await cli('keys', 'set-quota', 'nope', '5');
    expect(unknownQuota.code).toBe(1);
  });
});

describe('chatctx records import', () => {
  it('imports nothing when any record is invalid, and names each problem', async () => {
    const dir = join(work, 'mixed');
    await mkdir(dir);
    await writeFile(join(dir, 'a.json'), JSON.stringify(record('deadline-on-outbound-calls')));
    await writeFile(join(dir, 'b.jsonl'), [JSON.stringify(record('second-good-record')), JSON.stringify(record('Bad Slug', { sources: [] }))].join('\n'));
    const result = await cli('records', 'import', dir, '--approve');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/nothing was imported/);
    expect(result.stderr).toMatch(/b\.jsonl:2: slug: slug must be kebab-case/);
    expect(result.stderr).toMatch(/b\.jsonl:2: sources: every record needs at least one source/);

    // The valid records were not half-imported: importing them alone creates both.
    await writeFile(join(dir, 'b.jsonl'), JSON.stringify(record('second-good-record')));
    const retry = await cli('--json', 'records', 'import', dir, '--approve');
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ created: 2, approved: 2 });
  });

  it('reports unreadable files', async () => {
    const bad = join(work, 'broken.json');
    await writeFile(bad, '{"slug": ');
    const result = await cli('records', 'import', bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/broken\.json is not valid JSON/);
    const missing = await cli('records', 'import', join(work, 'nope'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No file or folder/);
  });

  it('stages changed text of an approved record as a revision instead of publishing it', async () => {
    const file = join(work, 'changed.json');
    await writeFile(file, JSON.stringify(record('deadline-on-outbound-calls', { recommendation: 'Changed, unreviewed text.' })));
    const result = await cli('--json', 'records', 'import', file);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ staged: 1, updated: 0, created: 0 });
    const listed = JSON.parse((await cli('--json', 'records', 'list', '--status', 'approved')).stdout) as any[];
    expect(listed.find((r) => r.slug === 'deadline-on-outbound-calls')).toMatchObject({ content_version: 1, pending_revision: true });
  });

  it('says when a record list stops at its limit instead of passing a page off as all of them', async () => {
    const page = await cli('--json', 'records', 'list', '--limit', '1');
    expect(JSON.parse(page.stdout)).toHaveLength(1);
    expect(page.stderr).toContain('showing the first 1 records; pass --limit');
    const all = await cli('--json', 'records', 'list', '--limit', '10000');
    expect(JSON.parse(all.stdout).length).toBeGreaterThan(1);
    expect(all.stderr).not.toContain('showing the first');
  });
});

describe('chatctx records review', () => {
  it('lists candidates, approves them (embedding them), deprecates them, and refuses unknown slugs', async () => {
    const file = join(work, 'review.json');
    await writeFile(file, JSON.stringify(record('review-me')));
    expect((await cli('records', 'import', file)).code).toBe(0);

    const candidates = JSON.parse((await cli('--json', 'records', 'list', '--status', 'candidate')).stdout) as any[];
    expect(candidates.map((r) => r.slug)).toContain('review-me');

    const approved = await cli('--json', 'records', 'approve', 'review-me');
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ changed: 1, embedding: { embedded: 1 } });
    const listed = JSON.parse((await cli('--json', 'records', 'list', '--status', 'approved')).stdout) as any[];
    expect(listed.find((r) => r.slug === 'review-me')).toMatchObject({ status: 'approved', embedded: true });

    expect((await cli('records', 'deprecate', 'review-me')).stdout).toMatch(/1 record\(s\) now deprecated/);
    const unknown = await cli('records', 'approve', 'review-me', 'no-such-slug');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No record has that slug or id: no-such-slug\. Nothing was changed\./);
    const after = JSON.parse((await cli('--json', 'records', 'list', '--status', 'deprecated')).stdout) as any[];
    expect(after.map((r) => r.slug)).toContain('review-me');
  });
});

describe('chatctx feedback list', () => {
  it('shows what agents reported, through the running server, without any caller identity', async () => {
    const dir = await preparedDataDir();
    // Feedback needs no embeddings: with them off the server is ready without embedding anything.
    const server = await startServer(NO_EMBEDDINGS, dir);
    try {
      const client = await connectClient(server.url);
      await client.callTool({ name: 'submit_feedback', arguments: { category: 'outdated', record: 'use-stable-keys-for-dynamic-react-lists', comment: 'Link moved.' } });
      await client.close();
      const listed = await runCli(['--json', 'feedback', 'list'], { CHATCTX_DATA_DIR: dir });
      expect(listed.code).toBe(0);
      const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ category: 'outdated', record: 'use-stable-keys-for-dynamic-react-lists', comment: 'Link moved.', source: 'other' });
      expect(Object.keys(rows[0]!).sort()).toEqual(['category', 'comment', 'created_at', 'id', 'record', 'reviewed_at', 'source']);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('one server per data directory', () => {
  it('refuses a second server on a data directory that is being served', async () => {
    const dir = await preparedDataDir();
    const server = await startServer(NO_EMBEDDINGS, dir);
    try {
      await expect(startServer(NO_EMBEDDINGS, dir)).rejects.toThrow(/Another chatctx server/);
      const info = JSON.parse(await readFile(join(dir, 'lock'), 'utf8'));
      expect(info).toMatchObject({ command: 'serve', mcpUrl: server.url });
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints the MCP URL and a ready-to-paste client configuration on start', async () => {
    const server = await startServer(NO_EMBEDDINGS);
    try {
      const out = server.output();
      expect(out).toContain(`"url": "${server.url}"`);
      expect(out).toMatch(/loaded \d+ starter records/);
    } finally {
      await server.stop();
    }
  });
});

describe('a CLI that feels native', () => {
  it('prints its version', async () => {
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('finds the store of a project from a subfolder, says which one it uses, and never creates one elsewhere', async () => {
    const project = await mkdtemp(join(tmpdir(), 'chatctx-project-'));
    try {
      const store = join(project, '.chatctx');
      expect((await runCli(['--data-dir', store, 'keys', 'create', '--name', 'here'])).code).toBe(0);
      const sub = join(project, 'src', 'deep');
      await mkdir(sub, { recursive: true });
      const fromSub = await runCliIn(sub, ['keys', 'list']);
      expect(fromSub.code).toBe(0);
      expect(fromSub.stdout).toContain('here');
      expect(fromSub.stderr).toContain(`data directory: ${store}`);

      const elsewhere = await mkdtemp(join(tmpdir(), 'chatctx-elsewhere-'));
      const refused = await runCliIn(elsewhere, ['keys', 'list']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/No chatctx data directory .* --data-dir/);
      expect(await readdir(elsewhere)).toEqual([]);
      await rm(elsewhere, { recursive: true, force: true });
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it('reports errors as JSON with --json', async () => {
    const result = await cli('--json', 'keys', 'revoke', '00000000-0000-4000-8000-000000000000');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: { code: 'not_found', message: 'No API key has that id.', details: { id: '00000000-0000-4000-8000-000000000000' } } });
  });

  it('says so when a key was already revoked', async () => {
    const id = JSON.parse((await cli('--json', 'keys', 'create', '--name', 'twice')).stdout).id as string;
    expect((await cli('keys', 'revoke', id)).stdout).toMatch(/^Revoked /);
    const again = await cli('keys', 'revoke', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/was already revoked, at \d{4}-/);
  });

  it('serves on the port and host given as options', async () => {
    // A restart: what is under test is where it listens.
    const dir = await preparedDataDir();
    const port = 18000 + Math.floor(Math.random() * 1000);
    const child = spawn(process.execPath, [CLI, '--data-dir', dir, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: REPO_ROOT,
      env: { ...process.env, CHATCTX_EMBEDDINGS: 'none' },
    });
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(out)), 240_000);
        child.stdout.on('data', () => out.includes('serving MCP at') && (clearTimeout(timer), resolve()));
      });
      expect(out).toContain(`serving MCP at http://127.0.0.1:${port}/mcp`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** The CLI run from another working directory, with no data directory in its environment. */
function runCliIn(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.CHATCTX_DATA_DIR;
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
