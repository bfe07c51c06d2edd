/**
 * The files of a local data directory, and who is serving it:
 *
 *   pgdata/       the embedded Postgres store
 *   pepper        the HMAC pepper (0600; see `secrets/file-secrets.ts`)
 *   server.json   while a server runs: its pid, MCP URL and admin URL
 *   admin-token   while a server runs: the bearer token of its admin endpoint (0600)
 *
 * Both the server and the CLI's admin client read these names from here, so the
 * client never loads the server to find them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ServerInfo {
  readonly pid: number;
  readonly mcpUrl: string;
  readonly adminUrl: string;
}

export const storePath = (dataDir: string) => join(dataDir, 'pgdata');
export const serverInfoPath = (dataDir: string) => join(dataDir, 'server.json');
export const adminTokenPath = (dataDir: string) => join(dataDir, 'admin-token');

/** The running server on this data directory, if its process is alive. */
export async function findRunningServer(dataDir: string): Promise<ServerInfo | undefined> {
  let info: ServerInfo;
  try {
    info = JSON.parse(await readFile(serverInfoPath(dataDir), 'utf8')) as ServerInfo;
  } catch {
    return undefined;
  }
  try {
    process.kill(info.pid, 0);
    return info;
  } catch (error) {
    // EPERM: alive but not ours to signal; anything else: gone, so the file is stale.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? info : undefined;
  }
}
