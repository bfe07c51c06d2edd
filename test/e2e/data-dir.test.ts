/**
 * A data directory under operators' faults, with the real CLI and server as child
 * processes: one owner at a time (racing writers lose nothing), refusals instead of
 * "repairs" that would discard data, a broken embedder that only degrades search,
 * and owner-only file modes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, REPO_ROOT, makeDataDir, preparedDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import { reviewedRecord } from '../support/records.ts';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function dataDir(): Promise<string> {
  const dir = await makeDataDir();
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A copy of a data directory after its first start, for tests whose subject comes after it. */
async function startedDataDir(): Promise<string> {
  const dir = await preparedDataDir();
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(dir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startServer({ CHATCTX_EMBEDDINGS: 'none', ...env }, dir);
  cleanup.push(() => server.stop());
  return server;
}

/** `count` valid records with slugs `<prefix>-<n>`, as one JSON file; they pass the quality gates. */
async function recordsFile(dir: string, prefix: string, count: number): Promise<string> {
  const records = Array.from({ length: count }, (_, i) => reviewedRecord(`${prefix}-${i}`));
  const file = join(dir, `${prefix}.json`);
  await writeFile(file, JSON.stringify(records));
  return file;
}

const cli = (dir: string, ...args: string[]) => runCli(['--data-dir', dir, ...args], { CHATCTX_EMBEDDINGS: 'none' });
const slugs = async (dir: string) => (JSON.parse((await cli(dir, '--json', 'records', 'list', '--limit', '10000')).stdout) as { slug: string }[]).map((r) => r.slug);

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) out.push(join(entry.parentPath, entry.name));
  return out.sort();
}

describe('one owner per data directory', () => {
  /**
   * What a racing command may do: succeed with its write present, or fail with a
   * message naming the holder and nothing written. Never report success and lose it.
   */
  function expectWholeOrRefused(result: { code: number; stderr: string }, written: boolean): void {
    if (result.code === 0) expect(written, 'a command that reported success lost its write').toBe(true);
    else {
      expect(result.stderr).toMatch(/is in use by `chatctx .+` \(pid \d+/);
      expect(written, 'a refused command wrote anyway').toBe(false);
    }
  }

  it('runs two importing CLI commands one after the other: each lands whole or is refused, nothing is lost', async () => {
    const dir = await dataDir();
    const [a, b] = await Promise.all([recordsFile(dir, 'alpha', 150), recordsFile(dir, 'beta', 150)]);
    const results = await Promise.all([cli(dir, 'records', 'import', a, '--approve'), cli(dir, 'records', 'import', b, '--approve')]);
    const all = await slugs(dir);
    const count = (prefix: string) => all.filter((s) => s.startsWith(`${prefix}-`)).length;
    expect([count('alpha'), count('beta')].every((n) => n === 0 || n === 150)).toBe(true);
    expectWholeOrRefused(results[0]!, count('alpha') === 150);
    expectWholeOrRefused(results[1]!, count('beta') === 150);
    expect(results.some((r) => r.code === 0)).toBe(true);
  });

  it('keeps a key created while an import runs, or refuses it clearly', async () => {
    const dir = await dataDir();
    const file = await recordsFile(dir, 'gamma', 200);
    const [imported, created] = await Promise.all([
      cli(dir, 'records', 'import', file),
      new Promise<Awaited<ReturnType<typeof cli>>>((resolve) => setTimeout(() => resolve(cli(dir, '--json', 'keys', 'create', '--name', 'during')), 300)),
    ]);
    expect(imported.code).toBe(0);
    const keys = JSON.parse((await cli(dir, '--json', 'keys', 'list')).stdout) as { id: string; name: string }[];
    expectWholeOrRefused(created, keys.some((k) => k.name === 'during'));
    if (created.code === 0) expect(keys.map((k) => k.id)).toContain((JSON.parse(created.stdout) as { id: string }).id);
  });

  it('sends a command issued while the server starts through the server, which then serves its records', async () => {
    const dir = await startedDataDir();
    const file = await recordsFile(dir, 'delta', 20);
    const starting = serve(dir);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const imported = await cli(dir, 'records', 'import', file, '--approve');
    const server = await starting;
    expect(imported.code).toBe(0);
    const client = await connectClient(server.url);
    const found = await client.callTool({ name: 'get_guidance', arguments: { ids: ['delta-0', 'delta-19'] } });
    expect((found.structuredContent as { results: unknown[] }).results).toHaveLength(2);
    await client.close();
  });

  it('starts the server once a CLI import that held the directory is done, with the import in it', async () => {
    const dir = await dataDir();
    const file = await recordsFile(dir, 'epsilon', 200);
    const importing = cli(dir, 'records', 'import', file, '--approve');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const server = await serve(dir);
    expect((await importing).code).toBe(0);
    const client = await connectClient(server.url);
    const found = await client.callTool({ name: 'get_guidance', arguments: { ids: ['epsilon-199'] } });
    expect((found.structuredContent as { results: unknown[] }).results).toHaveLength(1);
    await client.close();
  });

  it('is not blocked by the lock of a process killed mid-import, and the import is all or nothing', async () => {
    // A store that exists already: the kill is meant for the import, not for creating the store.
    const dir = await startedDataDir();
    // Large enough that the kill usually lands inside the import's transaction.
    const file = await recordsFile(dir, 'zeta', 2000);
    const child = spawn(process.execPath, [CLI, '--data-dir', dir, 'records', 'import', file], { cwd: REPO_ROOT, env: { ...process.env, CHATCTX_EMBEDDINGS: 'none' } });
    // Listening from the start: on a fast run the import may be over before the kill.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    child.kill('SIGKILL');
    await exited;
    const after = await slugs(dir);
    expect([0, 2000]).toContain(after.filter((s) => s.startsWith('zeta-')).length);
  });

  it('refuses a second server at once, naming the first', async () => {
    const dir = await startedDataDir();
    const first = await serve(dir);
    await expect(serve(dir)).rejects.toThrow(new RegExp(`Another chatctx server \\(pid \\d+\\) is serving this data directory at ${first.url}`));
  });
});

describe('faults are refused, never repaired by discarding data', () => {
  /** A data directory with a store and a key in it, and no process holding it. */
  async function populated(): Promise<string> {
    const dir = await dataDir();
    expect((await cli(dir, 'keys', 'create', '--name', 'precious')).code).toBe(0);
    return dir;
  }

  const refusal = async (dir: string, pattern: RegExp) => {
    const before = await filesUnder(dir);
    const result = await runCli(['serve'], { CHATCTX_DATA_DIR: dir, PORT: '0', CHATCTX_EMBEDDINGS: 'none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(pattern);
    expect(result.stderr).not.toMatch(/at .+\.ts:\d+|Aborted\(\)$/m);
    expect(await filesUnder(dir)).toEqual(before);
  };

  it('a missing pepper: refuses, says to restore it, and writes no new one', async () => {
    const dir = await populated();
    await rm(join(dir, 'pepper'));
    await refusal(dir, /pepper file .* is missing.*Restore the file from a backup/s);
  });

  it('a missing PG_VERSION: refuses instead of re-initialising the store', async () => {
    const dir = await populated();
    await rm(join(dir, 'pgdata', 'PG_VERSION'));
    await refusal(dir, /PG_VERSION is missing.*Restore the data directory from a backup/s);
  });

  it('an emptied write-ahead log: refuses with what to do', async () => {
    const dir = await populated();
    const wal = join(dir, 'pgdata', 'pg_wal');
    for (const name of await readdir(wal)) if (/^[0-9A-F]{24}$/.test(name)) await truncate(join(wal, name), 0);
    await refusal(dir, /could not be opened.*Restore the data directory from a backup/s);
  });

  it('a stale lock description naming a live, unrelated process does not block the start', async () => {
    const dir = await populated();
    await writeFile(join(dir, 'lock'), JSON.stringify({ pid: 1, command: 'serve', since: '2026-01-01T00:00:00Z', mcpUrl: 'http://127.0.0.1:1/mcp' }));
    const server = await serve(dir);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('a broken embedder on a fresh directory: starts, and searches answer by keyword', async () => {
    const dir = await dataDir();
    const server = await serve(dir, {
      CHATCTX_EMBEDDINGS: 'bedrock',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://127.0.0.1:9',
    });
    const client = await connectClient(server.url);
    const search = await client.callTool({ name: 'search_knowledge', arguments: { query: 'hash user passwords with argon2id' } });
    const retrieval = (search.structuredContent as { retrieval: { mode: string; degraded: boolean } }).retrieval;
    expect(retrieval).toMatchObject({ mode: 'keyword_fallback', degraded: true });
    await client.close();
  });
});

describe('private on disk', () => {
  const modes = async (dir: string) => {
    const wrong: string[] = [];
    for (const path of [dir, ...(await filesUnder(dir))]) {
      const info = await stat(path);
      const expected = info.isDirectory() ? 0o700 : 0o600;
      if ((info.mode & 0o777) !== expected) wrong.push(`${path} ${(info.mode & 0o777).toString(8)}`);
    }
    return wrong;
  };

  it('makes every folder 0700 and every file 0600 after a start, also in a directory that was open to others', async () => {
    const dir = await dataDir();
    await chmod(dir, 0o755);
    await mkdir(join(dir, 'eval-cache'), { mode: 0o755 });
    await writeFile(join(dir, 'admin-token'), 'stale\n', { mode: 0o644 });
    await chmod(join(dir, 'admin-token'), 0o644);
    await serve(dir);
    expect(await modes(dir)).toEqual([]);
    expect((await readFile(join(dir, 'admin-token'), 'utf8')).trim()).not.toBe('stale');
  });
});
