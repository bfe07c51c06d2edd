/**
 * The local runtime: one Node process that owns the embedded store and serves
 *
 *  - the MCP endpoint (`/mcp`) through the shared fetch-style core handler, plus
 *    the public documentation files, and
 *  - a loopback-only admin endpoint (`admin-endpoint.ts`) so CLI commands work
 *    while the server holds the store.
 *
 * `server.json` in the data directory (`data-dir.ts`) tells the CLI where the admin
 * endpoint is and stops a second server from opening the same store.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { getRequestListener } from '@hono/node-server';
import type { Embedder } from '../ports/embedder.ts';
import type { Logger } from '../ports/logger.ts';
import { createMcpHttpHandler } from '../protocol/mcp-http-handler.ts';
import { createToolHandlers } from '../tools/tool-handlers.ts';
import { InProcessToolInvoker } from '../tools/in-process-invoker.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { SqlQuotaStore } from '../quota/sql-quota-store.ts';
import { utcDay } from '../quota/quota-clock.ts';
import { createEmbedder } from '../embeddings/embedder-factory.ts';
import { embedRecords, recordsToEmbed } from '../embeddings/record-embeddings.ts';
import { errorKind } from '../observability/logger.ts';
import { createSiteHandler, type SiteHandler } from '../site/site-handler.ts';
import { listen } from './listen.ts';
import type { LocalConfig } from './local-config.ts';
import { openLocalStore, loadStarterCorpusOnce, type LocalStore } from './local-store.ts';
import { adminTokenPath, findRunningServer, serverInfoPath, type ServerInfo } from './data-dir.ts';
import { clientIp } from './client-ip.ts';
import { createAdminEndpoint } from './admin-endpoint.ts';

export interface RunningServer {
  readonly mcpUrl: string;
  readonly adminUrl: string;
  readonly starterCorpusLoaded: number | undefined;
  close(): Promise<void>;
}

export async function startLocalServer(config: LocalConfig, logger: Logger): Promise<RunningServer> {
  const running = await findRunningServer(config.dataDir);
  if (running) {
    throw new Error(`Another chatctx server (pid ${running.pid}) is serving this data directory at ${running.mcpUrl}.`);
  }
  const store = await openLocalStore(config.dataDir);
  let prepared: Awaited<ReturnType<typeof prepareStore>>;
  try {
    prepared = await prepareStore(store, config);
  } catch (error) {
    await store.close();
    throw error;
  }
  const { embedder } = prepared;
  logger.info('store_ready', { embedding_provider: embedder?.provider ?? 'none', embedded_records: prepared.embedded });

  const mcp = await serveMcp(store, embedder, config, logger);
  const adminToken = randomBytes(32).toString('base64url');
  await writeFile(adminTokenPath(config.dataDir), adminToken + '\n', { mode: 0o600 });
  const serveAdmin = createAdminEndpoint({ sql: store.sql, secrets: store.secrets, embedder }, adminToken, logger);
  const admin = createServer((req, res) => void serveAdmin(req, res));
  await listen(admin, 0, '127.0.0.1');
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}/admin`;
  const info: ServerInfo = { pid: process.pid, mcpUrl: mcp.url, adminUrl };
  await writeFile(serverInfoPath(config.dataDir), JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  // Load the sentence encoder now, off the start-up path, so the first search does not wait for it.
  embedder?.embed(['warm up']).catch((error: unknown) => logger.warn('embedder_warmup_failed', { error: errorKind(error) }));

  let closed: Promise<void> | undefined;
  return {
    mcpUrl: mcp.url,
    adminUrl,
    starterCorpusLoaded: prepared.starterCorpusLoaded,
    close: () =>
      (closed ??= (async () => {
        await rm(serverInfoPath(config.dataDir), { force: true });
        await rm(adminTokenPath(config.dataDir), { force: true });
        mcp.server.closeAllConnections();
        admin.closeAllConnections();
        await Promise.all([closeServer(mcp.server), closeServer(admin)]);
        await store.close();
      })()),
  };
}

/** Start-up work on the store: the starter corpus, housekeeping, stale embeddings, planner statistics. */
async function prepareStore(store: LocalStore, config: LocalConfig) {
  const embedder = await createEmbedder({ provider: config.embeddings, bedrockModelId: config.bedrockModelId });
  const starterCorpusLoaded = config.loadStarterCorpus ? (await loadStarterCorpusOnce(store))?.slugs.length : undefined;
  await new SqlQuotaStore(store.sql).prune(utcDay(new Date()));
  await store.sql.query("DELETE FROM embedding_cache WHERE last_used_at < now() - interval '30 days'");
  let embedded = 0;
  if (embedder) {
    // Records imported while another provider (or none) was configured are embedded now.
    const stale = await recordsToEmbed(store.sql, embedder.model);
    embedded = (await embedRecords(store.sql, embedder, stale)).embedded;
  }
  // PGlite has no autovacuum: refresh planner statistics once per start.
  await store.sql.query('ANALYZE');
  return { embedder, starterCorpusLoaded, embedded };
}

/** The MCP endpoint and the documentation files on HOST:PORT. */
async function serveMcp(store: LocalStore, embedder: Embedder | undefined, config: LocalConfig, logger: Logger): Promise<{ server: Server; url: string }> {
  const handlers = createToolHandlers({ sql: store.sql, secrets: store.secrets, embedder, logger });
  const handle = createMcpHttpHandler({
    config: {
      guestDailyLimit: config.guestDailyLimit,
      allowedHosts: config.allowedHosts,
      allowedOrigins: config.allowedOrigins,
      getStream: { mode: 'hold', keepAliveMs: config.keepAliveSeconds * 1000 },
    },
    keys: new KeyRepository(store.sql, store.secrets),
    quota: new SqlQuotaStore(store.sql),
    secrets: store.secrets,
    invoker: new InProcessToolInvoker(handlers),
    logger,
  });
  // The docs need the final URL (the port may be ephemeral), so they are rendered after listen.
  let site: SiteHandler = () => undefined;
  const server = createServer(
    getRequestListener(
      (request, env) => site(request) ?? handle(request, { clientIp: clientIp(env.incoming as IncomingMessage, config.trustedProxies) }),
    ),
  );
  // Keep-alive GET streams must not be cut by Node's default request timeout.
  server.requestTimeout = 0;
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${shownHost}:${port}/mcp`;
  site = createSiteHandler({ mcpUrl: url, guestDailyLimit: config.guestDailyLimit });
  return { server, url };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
