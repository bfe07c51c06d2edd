/**
 * Runs an owner command against a local data directory: through the running
 * server's loopback admin endpoint when one holds the store, or by opening the
 * store directly when none does. Either way the caller gets the same result or the
 * same `AppError`.
 */
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { Embedder } from '../ports/embedder.ts';
import type { EmbedProgress } from '../embeddings/record-embeddings.ts';
import { AppError } from '../errors/app-error.ts';
import { runAdminCommand, type AdminCommand } from '../admin/admin-operations.ts';
import { adminTokenPath, findRunningServer } from './local-server.ts';
import { openLocalStore } from './local-store.ts';

export interface LocalAdminOptions {
  /** Embedding provider for direct runs (the running server uses its own). */
  readonly embedder?: Embedder;
  readonly onProgress?: (progress: EmbedProgress) => void;
}

export async function runLocalAdmin(dataDir: string, command: AdminCommand, options: LocalAdminOptions = {}): Promise<unknown> {
  const server = await findRunningServer(dataDir);
  if (!server) {
    const store = await openLocalStore(dataDir);
    try {
      return await runAdminCommand(
        { sql: store.sql, pepper: () => store.secrets.pepper(), embedder: options.embedder, onProgress: options.onProgress },
        command,
      );
    } finally {
      await store.close();
    }
  }
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
  // NDJSON: progress lines, then one result or error line.
  type Line = { progress?: EmbedProgress; result?: unknown; error?: { code: AppError['code']; message: string; details?: Record<string, unknown> } };
  const lines = createInterface({ input: Readable.fromWeb(response.body as import('node:stream/web').ReadableStream) });
  for await (const text of lines) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as Line;
    if (line.progress) options.onProgress?.(line.progress);
    else if (line.error) throw new AppError(line.error.code, line.error.message, line.error.details ?? {});
    else return line.result;
  }
  throw new AppError('internal', 'The chatctx server ended the admin response without a result.');
}
