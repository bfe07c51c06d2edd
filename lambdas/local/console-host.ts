/**
 * Where `chatctx console` finds its console for a local data directory:
 *
 * - a server holds the directory: ask its owner port for a sign-in link (the
 *   console is served by the server, next to its admin endpoint);
 * - nobody does: hold the directory itself, open the store and serve the owner port
 *   (console and admin endpoint) until stopped, publishing its URL in the lock so
 *   other CLI commands, and a server started meanwhile, know it is busy;
 * - another command holds it: wait for it (a minute at most), then fail naming it.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '../ports/logger.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { AdminDeps } from '../admin/admin-operations.ts';
import { AppError } from '../errors/app-error.ts';
import { DataDirLock, adminTokenPath, describeOwner, makePrivate, readOwner, type DataDirOwner } from './data-dir.ts';
import { bindOwnerPort, createOwnerListener, type OwnerHandler } from './owner-listener.ts';

export interface ConsoleHost {
  /** The single-use sign-in link. */
  readonly link: string;
  /** Who serves the console: this process, or the server named. */
  readonly servedBy: string;
  /** Stops what this process started (nothing when a server serves the console). */
  close(): Promise<void>;
}

export interface ConsoleHostOptions {
  readonly embedder?: () => Promise<Embedder | undefined>;
  readonly searchEventRetentionDays?: number;
  readonly sourcesPrivateAddresses?: boolean;
  /** The owner port when this process serves the console. @default a free one */
  readonly port?: number;
  /** How long to wait for another command holding the directory. @default 60000 */
  readonly waitMs?: number;
  readonly onWait?: (holder: string) => void;
}

export async function openConsole(dataDir: string, logger: Logger, options: ConsoleHostOptions = {}): Promise<ConsoleHost> {
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  let told = false;
  for (;;) {
    const lock = await DataDirLock.tryAcquire(dataDir, 'console');
    if (lock) return serveHere(lock, logger, options);
    const owner = await readOwner(dataDir);
    if (owner?.adminUrl) {
      const servedBy = `${owner.command === 'serve' ? 'the server' : 'another chatctx console'} (pid ${owner.pid})`;
      return { link: await linkFrom(dataDir, owner), servedBy, close: async () => undefined };
    }
    if (Date.now() >= deadline) {
      throw new AppError('conflict', `The data directory ${dataDir} is in use by ${describeOwner(owner)}; try again when it has finished.`);
    }
    if (!told && owner) options.onWait?.(describeOwner(owner));
    told ||= owner !== undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function linkFrom(dataDir: string, owner: DataDirOwner): Promise<string> {
  const token = (await readFile(adminTokenPath(dataDir), 'utf8')).trim();
  const origin = new URL(owner.adminUrl!).origin;
  let response: Response;
  try {
    response = await fetch(`${origin}/console-link`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  } catch {
    throw new AppError('internal', `The chatctx server (pid ${owner.pid}) holds this data directory but its owner port did not answer.`);
  }
  const body = (await response.json().catch(() => ({}))) as { url?: unknown };
  if (!response.ok || typeof body.url !== 'string') {
    throw new AppError('internal', 'The chatctx server did not give a console link; check that the CLI and the server run the same version.');
  }
  return body.url;
}

async function serveHere(lock: DataDirLock, logger: Logger, options: ConsoleHostOptions): Promise<ConsoleHost> {
  const stops: (() => Promise<void>)[] = [() => lock.release()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    // The store is loaded only here: a console served by a running server needs none of it.
    const { openLocalStore } = await import('./local-store.ts');
    const store = await openLocalStore(lock);
    stops.push(async () => {
      await store.close();
      await makePrivate(lock.dataDir);
    });
    const embedder = await options.embedder?.();
    if (embedder?.close) stops.push(() => embedder.close!());
    const deps: AdminDeps = {
      sql: store.sql,
      secrets: store.secrets,
      embedder,
      searchEventRetentionDays: options.searchEventRetentionDays,
      sourcesPrivateAddresses: options.sourcesPrivateAddresses,
    };
    let handle!: (handler: OwnerHandler) => void;
    const port = await bindOwnerPort(lock, undefined, new Promise<OwnerHandler>((resolve) => (handle = resolve)), options.port);
    stops.push(port.close);
    const listener = createOwnerListener(deps, port.token, logger, { target: lock.dataDir, origin: () => port.origin });
    handle(listener);
    return { link: (await linkFrom(lock.dataDir, { pid: process.pid, command: 'console', since: '', adminUrl: port.url })), servedBy: 'this command', close: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
