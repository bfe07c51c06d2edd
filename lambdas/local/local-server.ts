/**
 * The local runtime: one Node process that owns the embedded store and serves
 *
 *  - the MCP endpoint (`/mcp`) through the shared fetch-style core handler, and
 *  - a loopback-only admin endpoint (random port, bearer token in a 0600 file in the
 *    data directory) so CLI commands work while the server holds the store: PGlite
 *    allows one process per data directory.
 *
 * `server.json` in the data directory tells the CLI where the admin endpoint is and
 * stops a second server from opening the same store.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { listen } from './listen.ts';
import type { LocalConfig } from './local-config.ts';
import { openLocalStore, loadStarterCorpusOnce } from './local-store.ts';
import { createMcpHttpHandler } from '../protocol/mcp-http-handler.ts';
import { createToolHandlers } from '../tools/tool-handlers.ts';
import { InProcessToolInvoker } from '../tools/in-process-invoker.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { SqlQuotaStore } from '../quota/sql-quota-store.ts';
import { runAdminCommand, type AdminDeps } from '../admin/admin-operations.ts';
import { createEmbedder } from '../embeddings/embedder-factory.ts';
import { embedRecords, recordsToEmbed, type EmbedProgress } from '../embeddings/record-embeddings.ts';
import { ValidationError, toAppError } from '../errors/app-error.ts';
import { errorKind, type Logger } from '../observability/logger.ts';
import { utcDay } from '../quota/quota-clock.ts';
import { createSiteHandler, type SiteHandler } from '../site/site-handler.ts';

export interface ServerInfo {
  readonly pid: number;
  readonly mcpUrl: string;
  readonly adminUrl: string;
}

export interface RunningServer {
  readonly mcpUrl: string;
  readonly adminUrl: string;
  readonly starterCorpusLoaded: number | undefined;
  close(): Promise<void>;
}

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

/** `::ffff:127.0.0.1` → `127.0.0.1`, so one client has one guest identity. */
export function normalizeIp(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The client address: the socket's peer, unless that peer is a configured trusted
 * proxy, in which case the right-most X-Forwarded-For hop that is not a trusted
 * proxy. A client-supplied header is never believed otherwise.
 */
export function clientIp(incoming: IncomingMessage, trustedProxies: readonly string[]): string {
  const peer = normalizeIp(incoming.socket.remoteAddress);
  if (!trustedProxies.includes(peer)) return peer;
  const forwarded = String(incoming.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(normalizeIp);
  for (let i = forwarded.length - 1; i >= 0; i--) if (!trustedProxies.includes(forwarded[i]!)) return forwarded[i]!;
  return peer;
}

export async function startLocalServer(config: LocalConfig, logger: Logger): Promise<RunningServer> {
  const running = await findRunningServer(config.dataDir);
  if (running) {
    throw new Error(`Another chatctx server (pid ${running.pid}) is serving this data directory at ${running.mcpUrl}.`);
  }
  const store = await openLocalStore(config.dataDir);
  const embedder = createEmbedder(config.embeddings);
  const pepper = () => store.secrets.pepper();
  let starterCorpusLoaded: number | undefined;
  let embedded = 0;
  try {
    if (config.loadStarterCorpus) starterCorpusLoaded = (await loadStarterCorpusOnce(store))?.slugs.length;
    await new SqlQuotaStore(store.sql).prune(utcDay(new Date()));
    await store.sql.query("DELETE FROM embedding_cache WHERE last_used_at < now() - interval '30 days'");
    if (embedder) {
      // Records imported while another provider (or none) was configured are embedded now.
      const stale = await recordsToEmbed(store.sql, embedder.model);
      embedded = (await embedRecords(store.sql, embedder, stale)).embedded;
    }
    // PGlite has no autovacuum: refresh planner statistics once per start.
    await store.sql.query('ANALYZE');
  } catch (error) {
    await store.close();
    throw error;
  }
  logger.info('store_ready', { embedding_provider: embedder?.provider ?? 'none', embedded_records: embedded });

  const handlers = createToolHandlers({ sql: store.sql, pepper, embedder, logger });
  const handle = createMcpHttpHandler({
    config: {
      guestDailyLimit: config.guestDailyLimit,
      allowedHosts: config.allowedHosts,
      allowedOrigins: config.allowedOrigins,
      getStream: { mode: 'hold', keepAliveMs: config.keepAliveSeconds * 1000 },
    },
    keys: new KeyRepository(store.sql, pepper),
    quota: new SqlQuotaStore(store.sql),
    pepper,
    invoker: new InProcessToolInvoker(handlers),
    logger,
  });

  // The docs need the final URL (the port may be ephemeral), so they are rendered after listen.
  let site: SiteHandler = () => undefined;
  const mcp = createServer(
    getRequestListener(
      (request, env) => site(request) ?? handle(request, { clientIp: clientIp(env.incoming as IncomingMessage, config.trustedProxies) }),
    ),
  );
  // Keep-alive GET streams must not be cut by Node's default request timeout.
  mcp.requestTimeout = 0;
  await listen(mcp, config.port, config.host);
  const mcpPort = (mcp.address() as AddressInfo).port;
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const mcpUrl = `http://${shownHost}:${mcpPort}/mcp`;
  site = createSiteHandler({ mcpUrl, guestDailyLimit: config.guestDailyLimit });

  const adminToken = randomBytes(32).toString('base64url');
  await writeFile(adminTokenPath(config.dataDir), adminToken + '\n', { mode: 0o600 });
  const admin = createServer((req, res) => void serveAdmin(req, res, { sql: store.sql, pepper, embedder }, adminToken, logger));
  await listen(admin, 0, '127.0.0.1');
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}/admin`;
  const info: ServerInfo = { pid: process.pid, mcpUrl, adminUrl };
  await writeFile(serverInfoPath(config.dataDir), JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  // Load the sentence encoder now, off the start-up path, so the first search does not wait for it.
  embedder?.embed(['warm up']).catch((error: unknown) => logger.warn('embedder_warmup_failed', { error: errorKind(error) }));

  let closed: Promise<void> | undefined;
  return {
    mcpUrl,
    adminUrl,
    starterCorpusLoaded,
    close: () =>
      (closed ??= (async () => {
        await rm(serverInfoPath(config.dataDir), { force: true });
        await rm(adminTokenPath(config.dataDir), { force: true });
        mcp.closeAllConnections();
        admin.closeAllConnections();
        await Promise.all([closeServer(mcp), closeServer(admin)]);
        await store.close();
      })()),
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

const ADMIN_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * The admin endpoint answers in NDJSON: zero or more `{"progress":{done,total}}`
 * lines while a long command (embedding) runs, then one `{"result":…}` or
 * `{"error":…}` line. The HTTP status is 200 once streaming has started.
 */
async function serveAdmin(req: IncomingMessage, res: ServerResponse, deps: AdminDeps, token: string, logger: Logger): Promise<void> {
  const reply = (status: number, body: unknown) => {
    if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/x-ndjson' });
    res.end(JSON.stringify(body) + '\n');
  };
  const presented = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  if (req.method !== 'POST' || req.url !== '/admin') return reply(404, { error: { code: 'not_found', message: 'POST /admin only.' } });
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    return reply(401, { error: { code: 'unauthorized', message: 'Invalid admin token.' } });
  }
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > ADMIN_BODY_LIMIT) return reply(413, { error: { code: 'validation_error', message: 'Admin request too large.' } });
      chunks.push(chunk as Buffer);
    }
    let command: unknown;
    try {
      command = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new ValidationError('The admin request body is not valid JSON.');
    }
    const onProgress = (progress: EmbedProgress) => {
      if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.write(JSON.stringify({ progress }) + '\n');
    };
    const result = await runAdminCommand({ ...deps, onProgress }, command);
    logger.info('admin_command', { op: (command as { op?: string }).op, outcome: 'ok' });
    reply(200, { result });
  } catch (error) {
    const appError = toAppError(error);
    logger.info('admin_command', { outcome: appError.code, error: appError.code === 'internal' ? errorKind(error) : undefined });
    const status = appError.code === 'validation_error' ? 400 : appError.code === 'not_found' ? 404 : appError.code === 'conflict' ? 409 : 500;
    reply(status, { error: { code: appError.code, message: appError.message, details: appError.details } });
  }
}
