/**
 * The local runtime: one Node process that owns a data directory and serves
 *
 *  - the MCP endpoint (`/mcp`), the OAuth endpoints and the public documentation
 *    files through the shared front door (`protocol/endpoint.ts`), and
 *  - a loopback-only owner port (`owner-listener.ts`): the admin endpoint, so CLI
 *    commands work while the server holds the store, and the owner console.
 *
 * Start-up, in order: take the data directory's lock (`data-dir.ts`); bind the MCP
 * port, so a port in use is reported before any other work; start the admin
 * endpoint and describe both URLs in the lock; open the store (the bundled encoder
 * loads meanwhile); warm both with a few searches nobody sees (`warm-up.ts`), so the
 * first search is not the slow one; answer. Requests
 * that arrive before the store is open wait for it. Records whose embedding is
 * missing or stale are embedded afterwards, in the background and off the event
 * loop; until then they are found by keyword, and a broken embedder only means
 * `keyword_fallback`. Search events past their retention are deleted in the
 * background too, at start and every 24 hours.
 *
 * Shutdown: stop accepting, let requests in flight finish (up to `drainMs`), stop
 * the background work, write the buffered search events, close the store, give up
 * the lock.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Embedder } from '../ports/embedder.ts';
import type { Logger } from '../ports/logger.ts';
import { createMcpHttpHandler } from '../protocol/mcp-http-handler.ts';
import { createEndpoint, type EndpointRoutes } from '../protocol/endpoint.ts';
import { createToolHandlers } from '../tools/tool-handlers.ts';
import { SearchCache } from '../retrieval/search-cache.ts';
import { ResidentKeywordIndex } from '../retrieval/resident-keyword-index.ts';
import { BufferedSearchEvents, type SearchEventSink } from '../retrieval/search-events.ts';
import { InProcessToolInvoker } from '../tools/in-process-invoker.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { SqlQuotaStore } from '../quota/sql-quota-store.ts';
import { MirroredQuotaStore } from '../quota/mirrored-quota-store.ts';
import { oauthKeyResolver } from '../oauth/access-token-resolver.ts';
import { UntrustedFetcher } from '../streams/untrusted-fetch.ts';
import { scheduleSourceChecks } from './source-check-timer.ts';
import { createOAuthRoutes } from '../oauth/oauth-routes.ts';
import { utcDay } from '../quota/quota-clock.ts';
import { createEmbedder } from '../embeddings/embedder-factory.ts';
import { startMemoryRelease } from './memory-release.ts';
import { dropEncoderThread } from '../embeddings/encoder-head-start.ts';
import { dropStoreThread } from '../storage/pglite-thread-sql.ts';
import { embedRecords, recordsToEmbed } from '../embeddings/record-embeddings.ts';
import { errorKind } from '../observability/logger.ts';
import { createSiteHandler } from '../site/site-handler.ts';
import { activeProfile } from '../retrieval/relevance-profiles.ts';
import { loadTokenizer } from '../retrieval/token-budget.ts';
import { analyzeIfStale } from './planner-statistics.ts';
import { drain, listen, tracked } from './listen.ts';
import type { LocalConfig } from './local-config.ts';
import { openLocalStore, loadStarterCorpusOnce, type LocalStore } from './local-store.ts';
import { DataDirError, DataDirLock, describeOwner, makePrivate, readOwner } from './data-dir.ts';
import { clientIp } from './client-ip.ts';
import { bindOwnerPort, createOwnerListener } from './owner-listener.ts';
import { warmEncoder, warmUp } from './warm-up.ts';
import { purgeSearchEvents } from '../analytics/search-analytics.ts';

export interface RunningServer {
  readonly mcpUrl: string;
  readonly adminUrl: string;
  readonly starterCorpusLoaded: number | undefined;
  /** Settles when the background embedding of stale records has finished (or failed). */
  readonly backgroundWork: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** How long shutdown waits for requests in flight. @default 5000 */
  readonly drainMs?: number;
  /** How long to wait for a CLI command that holds the data directory. @default 60000 */
  readonly waitMs?: number;
  /** Fetches OAuth client metadata documents; tests serve theirs through it. @default public addresses only */
  readonly oauthFetcher?: UntrustedFetcher;
}

/** What answers requests once the store is open. */
interface Ready {
  /** `/mcp` and the OAuth endpoints, behind the front door. */
  readonly routes: EndpointRoutes;
  readonly serveAdmin: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

export async function startLocalServer(config: LocalConfig, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  const lock = await acquire(config.dataDir, options.waitMs ?? 60_000, logger);
  const stops: (() => Promise<void>)[] = [() => lock.release()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    let ready!: (value: Ready) => void;
    const whenReady = new Promise<Ready>((resolve) => (ready = resolve));
    const mcp = await bindMcp(config, whenReady, options.drainMs ?? 5000, logger);
    let draining: Promise<void> | undefined;
    const drainMcp = () => (draining ??= mcp.close());
    stops.push(drainMcp);
    const admin = await bindOwnerPort(lock, mcp.url, whenReady.then((ready) => ready.serveAdmin));
    stops.push(() => admin.close());

    // The bundled encoder loads on its own threads while the store opens (warm-up.ts).
    const embedder = await createEmbedder({ provider: config.embeddings, bedrockModelId: config.bedrockModelId });
    if (embedder?.close) stops.push(() => embedder.close!());
    // Threads `chatctx serve` started ahead and nobody took: the encoder's when another provider answers (or on close).
    stops.push(dropEncoderThread, dropStoreThread);
    if (embedder?.provider !== 'use-lite') await dropEncoderThread();
    const encoderWarm = warmEncoder(embedder);
    // Parsing the tokenizer's tables holds this thread for a few hundred milliseconds:
    // begun first, it runs while the store's own thread opens the store.
    const tokenizer = loadTokenizer();
    const { store, starterCorpusLoaded } = await openServingStore(lock, config, stops);
    await tokenizer;
    const events = new BufferedSearchEvents(store.sql, logger);
    stops.push(() => events.close());
    await housekeeping(store);
    // PGlite creates its files 0666 whatever the umask; the 0700 directory already shuts others out.
    // The files' modes change (on the thread pool) while the warm-up runs, and before the server answers.
    const privacy = makePrivate(lock.dataDir);
    privacy.catch(() => undefined); // its failure is thrown below, by the await, not reported as unhandled meanwhile
    // Ready means warm: the first search is not the one that loads the encoder and the search tables.
    await warmUp(store, embedder, encoderWarm, logger);
    await privacy;
    // Read at start so an owner sees which relevance profile answers, and whether this store calibrated it.
    logger.info('relevance_profile', await activeProfile(store.sql, embedder));
    // The keyword side scored in memory (retrieval/resident-keyword-index.ts). Its copy loads once the
    // server answers, not before: searches meanwhile take the store's statement, which the warm-up warmed.
    const keywordIndex = config.keywordIndex === 'memory' ? new ResidentKeywordIndex(store.sql, { logger }) : undefined;
    ready(await answering(store, { embedder, keywordIndex }, events, config, logger, { token: admin.token, origin: new URL(admin.url).origin, mcpUrl: mcp.url }, options.oauthFetcher));
    logger.info('store_ready', { embedding_provider: embedder?.provider ?? 'none', created: store.created });
    void keywordIndex?.load();
    stops.push(retainSearchEvents(store, config.searchEventRetentionDays, logger));
    // Freed memory goes back to the system, not kept by the C allocator (memory-release.ts).
    const stopMemoryRelease = startMemoryRelease();
    stops.push(async () => stopMemoryRelease());
    if (config.sourceCheckIntervalHours > 0) {
      const fetcher = new UntrustedFetcher(config.sourcesPrivateAddresses ? { allowAddress: () => true } : {});
      stops.push(scheduleSourceChecks(store.sql, fetcher, config.sourceCheckIntervalHours, logger));
    }

    const background = new AbortController();
    stops.push(async () => background.abort());
    const backgroundWork = embedStale(store, embedder, background.signal, logger);
    let closed: Promise<void> | undefined;
    return {
      mcpUrl: mcp.url,
      adminUrl: admin.url,
      starterCorpusLoaded,
      backgroundWork,
      // Requests in flight are answered (and their events written) before anything else stops.
      close: () => (closed ??= drainMcp().then(stopAll)),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The data directory's lock. Another server is refused at once; a CLI command that
 * holds the directory (an import, say) is waited for, up to `waitMs`.
 */
async function acquire(dataDir: string, waitMs: number, logger: Logger): Promise<DataDirLock> {
  const deadline = Date.now() + waitMs;
  let told = false;
  for (;;) {
    const lock = await DataDirLock.tryAcquire(dataDir, 'serve');
    if (lock) return lock;
    const owner = await readOwner(dataDir);
    if (owner?.command === 'serve') {
      throw new DataDirError(`Another chatctx server (pid ${owner.pid}) is serving this data directory${owner.mcpUrl ? ` at ${owner.mcpUrl}` : ''}.`);
    }
    if (Date.now() >= deadline) {
      throw new DataDirError(`The data directory ${dataDir} is in use by ${describeOwner(owner)}; start the server when it has finished.`);
    }
    if (!told && owner) logger.info('waiting_for_data_dir', { holder_pid: owner.pid, holder_command: owner.command });
    told ||= owner !== undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The store the server answers from, with the starter corpus loaded when asked (its
 * record count when this start loaded it). A store this start created is closed and
 * opened again before answering: creating it (Postgres's initial files, the schema,
 * the import) left the store's thread holding about 500 MiB it never gives back
 * (WebAssembly memory does not shrink), and a new thread starts from what a restart
 * holds. It costs the first start one open of the store, about a second.
 */
async function openServingStore(lock: DataDirLock, config: LocalConfig, stops: (() => Promise<void>)[]) {
  const open = () => openLocalStore(lock, { thread: true, memory: { sharedBuffersMb: config.storeBuffersMb } });
  let store = await open();
  stops.push(() => store.close());
  const starterCorpusLoaded = config.loadStarterCorpus ? (await loadStarterCorpusOnce(store))?.slugs.length : undefined;
  if (store.created) {
    await store.close();
    store = { ...(await open()), created: true };
  }
  return { store, starterCorpusLoaded };
}

/** Expired quota counters and long-unused query embeddings go, and the planner's statistics are refreshed if stale. */
async function housekeeping(store: LocalStore): Promise<void> {
  await new SqlQuotaStore(store.sql).prune(utcDay(new Date()));
  await store.sql.query("DELETE FROM embedding_cache WHERE last_used_at < now() - interval '30 days'");
  await analyzeIfStale(store.sql);
}

/** How often the local server deletes search events past their retention. */
const RETENTION_INTERVAL_MS = 24 * 60 * 60 * 1000;

/**
 * Search-event retention: events older than `retentionDays` are deleted now, in the
 * background (answering never waits for it), and every 24 hours after. A failure is
 * logged (`search_event_purge_failed`) and the next turn tries again; it never stops
 * the server. Returns the stop for shutdown, which waits for a purge in flight.
 */
function retainSearchEvents(store: LocalStore, retentionDays: number, logger: Logger): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const purge = () => {
    running = running.then(async () => {
      try {
        const purged = await purgeSearchEvents(store.sql, retentionDays);
        if (purged > 0) logger.info('search_events_purged', { purged, retention_days: retentionDays });
      } catch (error) {
        logger.warn('search_event_purge_failed', { error: errorKind(error) });
      }
    });
  };
  purge();
  const timer = setInterval(purge, RETENTION_INTERVAL_MS).unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/**
 * The MCP handler and the admin endpoint over the store. Keys and today's quota
 * counters are kept in memory too (this process is their only writer), so a
 * handshake, a ping or a list never waits for the database; search events are
 * written in batches, and repeated questions and records read are kept per corpus
 * generation (retrieval/search-cache.ts).
 */
async function answering(
  store: LocalStore,
  { embedder, keywordIndex }: { embedder: Embedder | undefined; keywordIndex: ResidentKeywordIndex | undefined },
  events: SearchEventSink,
  config: LocalConfig,
  logger: Logger,
  owner: { token: string; origin: string; mcpUrl: string },
  oauthFetcher?: UntrustedFetcher,
): Promise<Ready> {
  const handlers = createToolHandlers({
    sql: store.sql,
    secrets: store.secrets,
    embedder,
    logger,
    events,
    cache: new SearchCache(),
    keywordIndex,
    driftDemotesConfidence: config.driftDemotesConfidence,
  });
  const repository = new KeyRepository(store.sql, store.secrets);
  const keys = oauthKeyResolver(repository, store.sql, store.secrets);
  const counters = new SqlQuotaStore(store.sql);
  const quota = await MirroredQuotaStore.open(counters, utcDay(new Date()), (day) => counters.counters(day));
  const mcp = createMcpHttpHandler({
    config: {
      guestDailyLimit: config.guestDailyLimit,
      getStream: { mode: 'hold', keepAliveMs: config.keepAliveSeconds * 1000 },
    },
    keys,
    quota,
    secrets: store.secrets,
    invoker: new InProcessToolInvoker(handlers),
    logger,
  });
  const admin = {
    sql: store.sql,
    secrets: store.secrets,
    embedder,
    keysChanged: () => keys.forget(),
    searchEventRetentionDays: config.searchEventRetentionDays,
    sourcesPrivateAddresses: config.sourcesPrivateAddresses,
  };
  const oauth = createOAuthRoutes({
    sql: store.sql,
    secrets: store.secrets,
    keys,
    redirectAllowlist: config.oauthRedirectAllowlist,
    logger,
    quota,
    registrationsPerHour: config.oauthRegistrationsPerHour,
    registrationsTotalPerHour: config.oauthRegistrationsTotalPerHour,
    pendingClientsMax: config.oauthPendingClientsMax,
    fetcher: oauthFetcher,
    onRevoked: () => keys.forget(),
  });
  const serveOwner = createOwnerListener(admin, owner.token, logger, { target: config.dataDir, mcpUrl: owner.mcpUrl, origin: () => owner.origin });
  const refresh = statisticsRefresher(store.sql);
  return {
    routes: { mcp, oauth },
    // An owner's command may change the corpus (an import, a review): the planner's statistics follow.
    serveAdmin: async (req, res) => {
      await serveOwner(req, res);
      refresh();
    },
  };
}

/**
 * Refreshes the planner's statistics in the background when they may be stale
 * (`analyzeIfStale`), one refresh at a time; a failure only leaves them as they were.
 */
function statisticsRefresher(sql: LocalStore['sql']): () => void {
  let running: Promise<unknown> | undefined;
  return () => {
    running ??= analyzeIfStale(sql)
      .catch(() => undefined)
      .finally(() => (running = undefined));
  };
}

/**
 * Embeds what is missing or stale, in the background, then loads the encoder if
 * nothing was (so the first search does not wait for it). A failure leaves those
 * records to keyword search. Logs `embeddings_current` or `embedding_failed`.
 */
async function embedStale(store: LocalStore, embedder: Embedder | undefined, signal: AbortSignal, logger: Logger): Promise<void> {
  if (!embedder) return;
  try {
    const stale = await recordsToEmbed(store.sql, embedder.model);
    const { embedded } = await embedRecords(store.sql, embedder, stale, { signal, deferIndex: true });
    if (embedded === 0) await embedder.embed(['warm up'], signal);
    // New passages and a new vector index: without statistics the planner takes the table for empty.
    else await analyzeIfStale(store.sql);
    logger.info('embeddings_current', { embedded_records: embedded });
  } catch (error) {
    if (signal.aborted) return;
    logger.warn('embedding_failed', { error: errorKind(error) });
  }
}

/**
 * The MCP endpoint and the documentation files on HOST:PORT. The port is bound
 * first; MCP requests wait until the store answers, the documentation does not.
 */
async function bindMcp(config: LocalConfig, whenReady: Promise<Ready>, drainMs: number, logger: Logger) {
  let url = '';
  let site = (_request: Request): Response | undefined => undefined;
  const endpoint = createEndpoint({
    guard: { allowedHosts: config.allowedHosts, allowedOrigins: config.allowedOrigins },
    site: (request) => site(request),
    routes: whenReady.then((ready) => ready.routes),
    logger,
  });
  const listener = getRequestListener((request, env) =>
    endpoint(request, { clientIp: clientIp(env.incoming as IncomingMessage, config.trustedProxies), baseUrl: new URL(request.url).origin }),
  );
  const requests = tracked(listener);
  // Request timeouts are checked this often (Node's default, 30 s, would let a trickle run past them).
  const server = createServer({ connectionsCheckingInterval: 1000 }, requests.listener);
  // A client that trickles its request gets 408; the timeouts cover receiving the request, not answering it.
  server.requestTimeout = config.requestTimeoutSeconds * 1000;
  server.headersTimeout = config.requestTimeoutSeconds * 1000;
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  url = `http://${shownHost}:${port}/mcp`;
  site = createSiteHandler({ mcpUrl: url, guestDailyLimit: config.guestDailyLimit });
  return { server, url, close: () => drain(server, requests.open, drainMs) };
}

