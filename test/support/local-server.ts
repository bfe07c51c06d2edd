/**
 * Starts the real `chatctx serve` as a child process on a fresh data directory
 * and an ephemeral port, and captures everything it prints, so tests drive the
 * service exactly as a user's client would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataDirTemplatePath } from './prepared.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(REPO_ROOT, 'bin', 'chatctx.js');
/** What `npm start` runs. */
export const SERVE_SCRIPT = join(REPO_ROOT, 'bin', 'serve.sh');

export interface TestServer {
  readonly url: string;
  readonly dataDir: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

export async function makeDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'chatctx-test-'));
}

/**
 * Makes `dir` a data directory as a first start leaves it (store, pepper, the
 * starter corpus approved and embedded) and stops the server cleanly: what
 * `preparedDataDir()` copies. Leaves no lock file or admin token behind.
 */
export async function firstStartedDataDir(dir: string): Promise<void> {
  const server = await startServer({}, dir);
  await server.stop();
  if (!/"event":"embeddings_current"/.test(server.output())) throw new Error(`the first start did not embed the starter corpus:\n${server.output()}`);
  await rm(join(dir, 'lock'), { force: true });
  await rm(join(dir, 'admin-token'), { force: true });
}

/**
 * A new data directory holding a copy of the run's first-started one (its own
 * copy: a test may change it freely), for tests whose subject is not the first
 * start: a restart takes about 3 s where a first start takes about 8. Every copy
 * has the same pepper. Without a prepared one (no global set-up) it starts and
 * stops a server itself.
 */
export async function preparedDataDir(): Promise<string> {
  // Loaded here, not at the top: the global set-up imports this module, and `vitest` cannot load there.
  const { inject } = await import('vitest');
  const prepared = inject('chatctxPrepared');
  const dir = await makeDataDir();
  if (prepared) await cp(dataDirTemplatePath(prepared), dir, { recursive: true });
  else await firstStartedDataDir(dir);
  return dir;
}

/**
 * Starts `chatctx serve`. It resolves once the server answers and, unless
 * embeddings are off, once the records it embeds in the background are done (or
 * failed), so a test's first search sees the same retrieval every time.
 */
export async function startServer(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  return launch(env, dataDir ?? (await makeDataDir()), !dataDir);
}

/**
 * `startServer` on its own copy of the prepared data directory, removed at stop:
 * for tests about what a running server does, not about its first start.
 */
export async function startPreparedServer(env: Record<string, string> = {}): Promise<TestServer> {
  return launch(env, await preparedDataDir(), true);
}

/** Starts the server on `dir`; `owned` means `stop()` removes the directory. */
async function launch(env: Record<string, string>, dir: string, owned: boolean): Promise<TestServer> {
  // As `npm start` runs it: the script execs `chatctx serve`, so `child` is the server itself.
  const child: ChildProcess = spawn('sh', [SERVE_SCRIPT], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', CHATCTX_DATA_DIR: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 240_000);
    const embeddingsOff = (env.CHATCTX_EMBEDDINGS ?? process.env.CHATCTX_EMBEDDINGS) === 'none';
    const check = () => {
      const match = /serving MCP at (http:\/\/\S+\/mcp)/.exec(output);
      const settled = embeddingsOff || /"event":"(embeddings_current|embedding_failed)"/.test(output);
      if (match && settled) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    dataDir: dir,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (owned) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs the CLI as a child process and returns its exit code and output. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
