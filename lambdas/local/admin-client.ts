/**
 * Runs an owner command against a local data directory: through the running
 * server's loopback admin endpoint when one holds the store, or by opening the
 * store directly when none does. Either way the caller gets the same result or the
 * same `AppError` (`admin/admin-envelope.ts` opens the answer).
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Embedder } from '../ports/embedder.ts';
import type { EmbedProgress } from '../embeddings/record-embeddings.ts';
import { AppError } from '../errors/app-error.ts';
import { runAdminCommand, type AdminCommand } from '../admin/admin-operations.ts';
import { openEnvelope, parseAdminLine } from '../admin/admin-envelope.ts';
import { adminTokenPath, findRunningServer, type ServerInfo } from './data-dir.ts';
import { openLocalStore } from './local-store.ts';

export interface LocalAdminOptions {
  /** Embedding provider for direct runs (the running server uses its own). */
  readonly embedder?: () => Promise<Embedder | undefined>;
  readonly onProgress?: (progress: EmbedProgress) => void;
}

export async function runLocalAdmin(dataDir: string, command: AdminCommand, options: LocalAdminOptions = {}): Promise<unknown> {
  const server = await findRunningServer(dataDir);
  if (server) return viaServer(dataDir, server, command, options);
  const store = await openLocalStore(dataDir);
  try {
    return await runAdminCommand({ sql: store.sql, secrets: store.secrets, embedder: await options.embedder?.(), onProgress: options.onProgress }, command);
  } finally {
    await store.close();
  }
}

async function viaServer(dataDir: string, server: ServerInfo, command: AdminCommand, options: LocalAdminOptions): Promise<unknown> {
  const token = (await readFile(adminTokenPath(dataDir), 'utf8')).trim();
  let response: Response;
  try {
    response = await fetch(server.adminUrl, {
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
