/**
 * `bin/serve.sh`, what `npm start` runs: the process it leaves is the server itself,
 * started with the allocator and V8 settings the script chooses, and settings an
 * operator already made are kept. Read from /proc, so Linux only.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, SERVE_SCRIPT } from '../support/local-server.ts';

interface Started {
  readonly argv: string[];
  readonly env: Map<string, string>;
}

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Starts the script with `env` added, reads the server's command line and environment, stops it. */
async function startThroughScript(env: Record<string, string>): Promise<Started> {
  const dir = await mkdtemp(join(tmpdir(), 'chatctx-serve-script-'));
  dirs.push(dir);
  const base = { ...process.env };
  for (const name of ['NODE_OPTIONS', 'MALLOC_MMAP_THRESHOLD_']) delete base[name];
  const child = spawn('sh', [SERVE_SCRIPT], {
    cwd: REPO_ROOT,
    env: { ...base, PORT: '0', HOST: '127.0.0.1', CHATCTX_DATA_DIR: join(dir, 'data'), CHATCTX_EMBEDDINGS: 'none', CHATCTX_STARTER_CORPUS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 120_000);
      const seen = (d: Buffer) => {
        output += d.toString();
        if (/serving MCP at http/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}:\n${output}`));
      });
    });
    const argv = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    const env = new Map(
      (await readFile(`/proc/${child.pid}/environ`, 'utf8'))
        .split('\0')
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)] as [string, string]),
    );
    return { argv, env };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

const onLinux = process.platform === 'linux';
const cores = onLinux ? Number(execFileSync('getconf', ['_NPROCESSORS_ONLN'], { encoding: 'utf8' }).trim()) : 0;

describe.skipIf(!onLinux)('bin/serve.sh', () => {
  it('execs the server itself with the mmap threshold fixed, and one V8 helper thread on two cores or fewer', async () => {
    const { argv, env } = await startThroughScript({});
    expect(argv[0]).toMatch(/node$/);
    expect(argv.slice(-2)).toEqual([expect.stringMatching(/bin\/chatctx\.js$/), 'serve']);
    expect(env.get('MALLOC_MMAP_THRESHOLD_')).toBe('131072');
    expect(argv.includes('--v8-pool-size=1')).toBe(cores <= 2);
  });

  it("keeps an operator's own allocator threshold and V8 pool size", async () => {
    const { argv, env } = await startThroughScript({ NODE_OPTIONS: '--v8-pool-size=3', MALLOC_MMAP_THRESHOLD_: '262144' });
    expect(argv.some((arg) => arg.startsWith('--v8-pool-size'))).toBe(false);
    expect(env.get('NODE_OPTIONS')).toBe('--v8-pool-size=3');
    expect(env.get('MALLOC_MMAP_THRESHOLD_')).toBe('262144');
  });
});
