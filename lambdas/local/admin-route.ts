/**
 * Runs an owner command against a local data directory: through the running
 * server's loopback admin endpoint when one holds the store, or by opening the
 * store directly when none does. Either way the caller gets the same result or the
 * same `AppError`.
 */
import { readFile } from 'node:fs/promises';
import { AppError } from '../errors/app-error.ts';
import { runAdminCommand, type AdminCommand } from '../admin/admin-operations.ts';
import { adminTokenPath, findRunningServer } from './local-server.ts';
import { openLocalStore } from './local-store.ts';

export async function runLocalAdmin(dataDir: string, command: AdminCommand): Promise<unknown> {
  const server = await findRunningServer(dataDir);
  if (!server) {
    const store = await openLocalStore(dataDir);
    try {
      return await runAdminCommand({ sql: store.sql, pepper: () => store.secrets.pepper() }, command);
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
  const body = (await response.json()) as { result?: unknown; error?: { code: AppError['code']; message: string; details?: Record<string, unknown> } };
  if (body.error) throw new AppError(body.error.code, body.error.message, body.error.details ?? {});
  return body.result;
}
