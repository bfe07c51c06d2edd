/**
 * `chatctx console` with no server running: the command holds the data directory,
 * serves the console and the admin endpoint on loopback, and other CLI commands run
 * through it meanwhile (an action in either shows in the other). A second
 * `chatctx console` gets a link from the first. Ctrl+C gives the directory back with
 * everything kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, preparedDataDir, runCli } from '../support/local-server.ts';

const ENV = { CHATCTX_EMBEDDINGS: 'none' };
let dir: string;
let child: ChildProcess;
let first: { url: string; served_by: string };

async function signIn(link: string): Promise<string> {
  const response = await fetch(link, { redirect: 'manual' });
  expect(response.status).toBe(303);
  return /chatctx_console=[^;]+/.exec(response.headers.get('set-cookie') ?? '')![0];
}

beforeAll(async () => {
  dir = await preparedDataDir();
  child = spawn(process.execPath, [CLI, '--data-dir', dir, '--json', 'console'], { cwd: REPO_ROOT, env: { ...process.env, ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  first = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no console link:\n${output}`)), 240_000);
    const look = (data: Buffer) => {
      output += data.toString();
      const line = output.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
    child.once('exit', (code) => reject(new Error(`console exited with ${code}:\n${output}`)));
  });
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

describe('chatctx console without a server', () => {
  it('serves the console itself, on loopback', () => {
    expect(first.served_by).toBe('this command');
    expect(new URL(first.url).hostname).toBe('127.0.0.1');
    expect(first.url).toMatch(/\/console\/login\?token=[\w-]{40,}$/);
  });

  it('lets other CLI commands run meanwhile, and each side sees the other', async () => {
    const cookie = await signIn(first.url);
    const origin = new URL(first.url).origin;
    const created = await runCli(['--data-dir', dir, '--json', 'keys', 'create', '--name', 'made in the terminal'], ENV);
    expect(created.code, created.stderr).toBe(0);
    const page = await (await fetch(`${origin}/console/keys`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain('made in the terminal');
  });

  it('gives a second console a link to the first', async () => {
    const second = await runCli(['--data-dir', dir, '--json', 'console'], ENV);
    expect(second.code, second.stderr).toBe(0);
    const answer = JSON.parse(second.stdout) as { url: string; served_by: string };
    expect(answer.served_by).toMatch(/^another chatctx console \(pid \d+\)$/);
    expect(new URL(answer.url).origin).toBe(new URL(first.url).origin);
    await signIn(answer.url);
  });

  it('gives the directory back on Ctrl+C with everything kept', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const listed = await runCli(['--data-dir', dir, '--json', 'keys', 'list'], ENV);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((k) => k.name)).toContain('made in the terminal');
  });
});
