/**
 * Runs an owner command against a local data directory, as the directory's owner
 * allows:
 *
 * - nobody holds it: take its lock, open the store, run, close, let go;
 * - a server holds it: send the command to the server's loopback admin endpoint
 *   (its URL is in the lock's owner description, its token in `admin-token`);
 * - another command holds it: wait for it (a minute at most), then fail naming the
 *   holder.
 *
 * Either way the caller gets the same result or the same `AppError`
 * (`admin/admin-envelope.ts` opens the server's answer).
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Embedder } from '../ports/embedder.ts';
import type { EmbedProgress } from '../embeddings/record-embeddings.ts';
import { AppError } from '../errors/app-error.ts';
import type { AdminCommand } from '../admin/admin-operations.ts';
import { openEnvelope, parseAdminLine } from '../admin/admin-envelope.ts';
import { DataDirLock, adminTokenPath, describeOwner, makePrivate, readOwner, type DataDirOwner } from './data-dir.ts';

export interface LocalAdminOptions {
  /** Embedding provider for direct runs (the running server uses its own). */
  readonly embedder?: () => Promise<Embedder | undefined>;
  readonly onProgress?: (progress: EmbedProgress) => void;
  /** How long to wait for another command holding the directory. @default 60000 */
  readonly waitMs?: number;
  /** Told once when the command has to wait for another one. */
  readonly onWait?: (holder: string) => void;
  /** Days search events are kept, for direct runs (the running server uses its own setting). */
  readonly searchEventRetentionDays?: number;
  /** Let `records verify` fetch loopback and private addresses, for direct runs. */
  readonly sourcesPrivateAddresses?: boolean;
}

export async function runLocalAdmin(dataDir: string, command: AdminCommand, options: LocalAdminOptions = {}): Promise<unknown> {
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  let told = false;
  for (;;) {
    const lock = await DataDirLock.tryAcquire(dataDir, command.op.replace('.', ' '));
    if (lock) return runDirectly(lock, command, options);
    const owner = await readOwner(dataDir);
    if (owner?.adminUrl) return viaServer(dataDir, owner, command, options);
    if (Date.now() >= deadline) {
      throw new AppError('conflict', `The data directory ${dataDir} is in use by ${describeOwner(owner)}; try again when it has finished.`);
    }
    if (!told && owner) options.onWait?.(describeOwner(owner));
    told ||= owner !== undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function runDirectly(lock: DataDirLock, command: AdminCommand, options: LocalAdminOptions): Promise<unknown> {
  // The store and the operations are loaded only here: a command sent to a running server needs neither.
  const [{ openLocalStore }, { runAdminCommand }] = await Promise.all([import('./local-store.ts'), import('../admin/admin-operations.ts')]);
  try {
    const store = await openLocalStore(lock);
    const embedder = await options.embedder?.();
    try {
      const deps = {
        sql: store.sql,
        secrets: store.secrets,
        embedder,
        onProgress: options.onProgress,
        searchEventRetentionDays: options.searchEventRetentionDays,
        sourcesPrivateAddresses: options.sourcesPrivateAddresses,
      };
      return await runAdminCommand(deps, command);
    } finally {
      await embedder?.close?.();
      await store.close();
      // PGlite creates its files 0666 whatever the umask.
      await makePrivate(lock.dataDir);
    }
  } finally {
    await lock.release();
  }
}

async function viaServer(dataDir: string, server: DataDirOwner, command: AdminCommand, options: LocalAdminOptions): Promise<unknown> {
  const token = (await readFile(adminTokenPath(dataDir), 'utf8')).trim();
  let response: Response;
  try {
    response = await fetch(server.adminUrl!, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(command),
    });
  } catch {
    throw new AppError('internal', `The chatctx server (pid ${server.pid}) holds this data directory but its admin endpoint did not answer.`);
  }
  const lines = createInterface({ input: Readable.fromWeb(response.body as NodeReadableStream) });
  for await (const text of lines) {
    if (text.trim() === '') continue;
    const line = parseAdminLine(text);
    if ('progress' in line) options.onProgress?.(line.progress);
    else return openEnvelope(line);
  }
  throw new AppError('internal', 'The chatctx server ended the admin response without a result.');
}
