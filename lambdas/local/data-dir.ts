/**
 * A local data directory: its files, who owns it, and keeping it private.
 *
 *   lock          held (an OS lock) by the one process that has the store open, and
 *                 holding that process's description: pid, command, and for a
 *                 server its MCP and admin URLs
 *   pgdata/       the embedded Postgres store
 *   pepper        the HMAC pepper (see `secrets/file-secrets.ts`)
 *   admin-token   while a server runs: the bearer token of its admin endpoint
 *
 * PGlite allows one process per store, and two writers silently lose data, so
 * every process that opens the store (the server, any CLI command, the eval harness
 * on a data directory) takes the lock first, before it touches any other file. The
 * lock is an open-file-description lock (`fcntl(F_OFD_SETLK)`, through
 * `fs-native-extensions`): the kernel drops it when its holder exits, however it
 * exits, so a lock left by a dead process never blocks. The owner description is
 * only informative; the lock decides.
 *
 * Everything under the directory is owner-only (0700 folders, 0600 files): the
 * directory itself on every acquisition, everything in it once the store is open
 * (the server) or closed (a CLI command), because PGlite writes its files 0666
 * whatever the umask. The pepper and the database hold what keys and quotas depend
 * on; the 0700 directory is what keeps others out in between.
 */
import { chmod, mkdir, open, readFile, readdir, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

// fs-native-extensions ships no type declarations; this is the one function used.
const { tryLock } = createRequire(import.meta.url)('fs-native-extensions') as { tryLock(fd: number): boolean };

export const storePath = (dataDir: string) => join(dataDir, 'pgdata');
export const pepperPath = (dataDir: string) => join(dataDir, 'pepper');
export const adminTokenPath = (dataDir: string) => join(dataDir, 'admin-token');
export const lockPath = (dataDir: string) => join(dataDir, 'lock');

/** Who holds a data directory, as its holder describes itself. */
export interface DataDirOwner {
  readonly pid: number;
  /** What the holder is doing, e.g. `serve` or `records import`. */
  readonly command: string;
  /** ISO-8601, when it took the lock. */
  readonly since: string;
  /** A server, once listening. */
  readonly mcpUrl?: string;
  /** A server, once its admin endpoint listens: where other commands send their work. */
  readonly adminUrl?: string;
}

/** A problem with the data directory a person has to act on; the message says how. */
export class DataDirError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DataDirError';
  }
}

export class DataDirLock {
  private constructor(
    readonly dataDir: string,
    private handle: FileHandle | undefined,
    private owner: DataDirOwner,
  ) {}

  /**
   * Takes the lock, creating the directory (0700) and the lock file (0600) if needed,
   * and makes the directory owner-only. Undefined when another process holds it.
   */
  static async tryAcquire(dataDir: string, command: string): Promise<DataDirLock | undefined> {
    try {
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new DataDirError(`Cannot create the data directory ${dataDir} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check its parent's permissions.`, { cause: error });
    }
    let handle: FileHandle;
    try {
      handle = await open(lockPath(dataDir), 'a+', 0o600);
    } catch (error) {
      throw new DataDirError(`Cannot open ${lockPath(dataDir)} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the data directory's permissions.`, { cause: error });
    }
    if (!tryLock(handle.fd)) {
      await handle.close();
      return undefined;
    }
    const lock = new DataDirLock(dataDir, handle, { pid: process.pid, command, since: new Date().toISOString() });
    await lock.describe({});
    // The folder first: once it is 0700 nothing inside is reachable by others; its files are fixed once the store is open.
    await chmod(dataDir, 0o700);
    return lock;
  }

  /** Adds to the owner description other processes read (a server's URLs, say). */
  async describe(update: Partial<Pick<DataDirOwner, 'mcpUrl' | 'adminUrl'>>): Promise<void> {
    if (!this.handle) throw new Error('The data directory lock has been released.');
    this.owner = { ...this.owner, ...update };
    const text = JSON.stringify(this.owner) + '\n';
    await this.handle.truncate(0);
    await this.handle.write(text, 0);
  }

  /** Gives the directory up; the description is cleared so no reader mistakes it for a live owner. */
  async release(): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    this.handle = undefined;
    await handle.truncate(0).catch(() => undefined);
    await handle.close();
  }
}

/** The holder's description, if the lock file holds a complete one (it may be mid-write or stale). */
export async function readOwner(dataDir: string): Promise<DataDirOwner | undefined> {
  try {
    const owner = JSON.parse(await readFile(lockPath(dataDir), 'utf8')) as DataDirOwner;
    return typeof owner.pid === 'number' && typeof owner.command === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The nearest folder called `name` that holds a store, in `start` or a folder above
 * it, the way git finds its repository: a command run from a subfolder of a project
 * uses the project's store instead of creating an empty one where it stands.
 */
export function findDataDir(start: string, name: string): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const candidate = join(dir, name);
    if (existsSync(storePath(candidate)) || existsSync(pepperPath(candidate))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** `pid 123 (chatctx serve, since …)`, for messages. */
export function describeOwner(owner: DataDirOwner | undefined): string {
  return owner ? `\`chatctx ${owner.command}\` (pid ${owner.pid}, since ${owner.since})` : 'another chatctx process';
}

/** 0700 for the directory and every folder in it, 0600 for every file; links are left alone. */
export async function makePrivate(dir: string): Promise<void> {
  await chmod(dir, 0o700);
  // Entries of a folder in parallel: a store holds about a thousand files.
  await Promise.all(
    (await readdir(dir, { withFileTypes: true })).map(async (entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await makePrivate(path);
      else if (!entry.isSymbolicLink()) await chmod(path, 0o600);
    }),
  );
}
