/**
 * What the loopback owner port answers, for the local server and for
 * `chatctx console` when it holds the store itself:
 *
 * - `POST /admin`: admin commands from the CLI (`admin-endpoint.ts`), for the
 *   data directory's admin token;
 * - `POST /console-link`: a single-use sign-in link to the console, for the same
 *   token (this is how `chatctx console` gets one from a running server);
 * - `/console/…`: the owner console (`console/console-app.ts`), whose commands run
 *   in this process through the same operations and log the same `admin_command`
 *   events as the CLI's.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { chmod, rm, writeFile } from 'node:fs/promises';
import { getRequestListener } from '@hono/node-server';
import type { Logger } from '../ports/logger.ts';
import { runEnveloped, type AdminDeps } from '../admin/admin-operations.ts';
import { openEnvelope } from '../admin/admin-envelope.ts';
import { createConsole, type OwnerConsole } from '../console/console-app.ts';
import { bearerMatches, createAdminEndpoint } from './admin-endpoint.ts';
import { adminTokenPath, type DataDirLock } from './data-dir.ts';
import { drain, listen, tracked } from './listen.ts';

export interface OwnerListenerOptions {
  /** Shown in the console's header. */
  readonly target: string;
  /** The MCP endpoint, for the client set-ups shown with a new key (none when no server runs). */
  readonly mcpUrl?: string;
  /** The listener's own origin (`http://127.0.0.1:PORT`), known once it is bound. */
  readonly origin: () => string;
}

/** The console over admin operations that run in this process. */
export function localConsole(deps: AdminDeps, logger: Logger, options: Pick<OwnerListenerOptions, 'target' | 'mcpUrl'>): OwnerConsole {
  return createConsole({
    run: async (command) => openEnvelope(await runEnveloped(deps, command, logger)),
    target: options.target,
    mcpUrl: options.mcpUrl,
    logger,
  });
}

export function createOwnerListener(deps: AdminDeps, token: string, logger: Logger, options: OwnerListenerOptions): RequestListener {
  const admin = createAdminEndpoint(deps, token, logger);
  const console = localConsole(deps, logger, options);
  const serveConsole = getRequestListener((request) => console.fetch(request));
  const expected = Buffer.from(token);
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (path === '/console' || path.startsWith('/console/')) return serveConsole(req, res);
    if (path === '/console-link' && req.method === 'POST') {
      const ok = bearerMatches(req, expected);
      res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(ok ? { url: console.issueLink(options.origin()) } : { error: { code: 'unauthorized', message: 'Invalid admin token.' } }));
      return;
    }
    return admin(req, res);
  };
}

export type OwnerHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * The owner port on loopback (a random port unless one is asked for). Its token is
 * written 0600 before its URL is published in the lock, so a command that finds the
 * URL can always read the token. Requests that arrive before `handler` settles wait.
 */
export async function bindOwnerPort(lock: DataDirLock, mcpUrl: string | undefined, handler: Promise<OwnerHandler>, port = 0) {
  const token = randomBytes(32).toString('base64url');
  const path = adminTokenPath(lock.dataDir);
  await rm(path, { force: true });
  await writeFile(path, token + '\n', { mode: 0o600 });
  await chmod(path, 0o600);
  const requests = tracked(async (req, res) => (await handler)(req, res));
  const server = createServer(requests.listener);
  await listen(server, port, '127.0.0.1');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${origin}/admin`;
  await lock.describe(mcpUrl ? { mcpUrl, adminUrl: url } : { adminUrl: url });
  return {
    token,
    url,
    origin,
    close: async () => {
      await drain(server, requests.open, 0);
      await rm(path, { force: true });
    },
  };
}

/** A console alone on a loopback port (the `--remote` console on the owner's machine). */
export async function serveConsole(console: OwnerConsole, port = 0) {
  const requests = tracked(getRequestListener((request) => console.fetch(request)));
  const server = createServer(requests.listener);
  await listen(server, port, '127.0.0.1');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => drain(server, requests.open, 1000) };
}
