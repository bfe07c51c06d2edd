/**
 * The MCP endpoint as one fetch-style function: `Request` in, `Response` out.
 * Both runtimes call it (the local Node server and the API Gateway Lambda), so
 * transport rules live here once:
 *
 *   path → Origin/Host (403) → method (405) → auth (401) → Accept (406)
 *   → Content-Type (415) → size (413) → JSON (400/-32700) → quota (429)
 *   → a fresh MCP server + stateless transport → SSE-framed response.
 *
 * It does not know PGlite, DynamoDB or Lambda: those sit behind the ports in
 * `McpHttpDeps`. It never issues `Mcp-Session-Id`, and counts only `tools/call`
 * against quotas (a handshake must never be refused for quota).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LIMITS } from '../../schema/tools.ts';
import type { QuotaStore } from '../ports/quota-store.ts';
import type { ToolInvoker } from '../ports/tool-invoker.ts';
import type { Logger } from '../observability/logger.ts';
import { errorKind } from '../observability/logger.ts';
import { authenticate, type Caller, type KeyResolver } from '../auth/bearer.ts';
import { hashClientIp } from '../privacy/hashing.ts';
import { secondsUntilNextUtcMidnight, utcDay } from '../quota/quota-clock.ts';
import { checkOrigin, type OriginPolicy } from './request-guards.ts';
import { createMcpServer } from './mcp-server.ts';
import { HTTP, SSE_HEADERS, sseFrame, type JsonRpcId } from './http-responses.ts';

export interface McpHttpConfig extends OriginPolicy {
  /** Path of the MCP endpoint. @default '/mcp' */
  readonly path?: string;
  /** Tool calls per guest IP per UTC day; 0 turns guest access off. */
  readonly guestDailyLimit: number;
  /**
   * GET stream behaviour. `hold`: keep it open with a `: keepalive` comment every
   * `keepAliveMs` (local server). `close`: send `: connected` and a `retry:` hint,
   * then end (Lambda, where a held stream bills idle time).
   */
  readonly getStream: { readonly mode: 'hold'; readonly keepAliveMs: number } | { readonly mode: 'close'; readonly retryMs: number };
}

export interface McpHttpDeps {
  readonly config: McpHttpConfig;
  readonly keys: KeyResolver;
  readonly quota: QuotaStore;
  readonly pepper: () => Promise<Buffer>;
  readonly invoker: ToolInvoker;
  readonly logger: Logger;
  readonly now?: () => Date;
}

export interface RequestContext {
  /** The connection's source address as the socket or API Gateway reports it. */
  readonly clientIp: string;
}

export type McpHttpHandler = (request: Request, context: RequestContext) => Promise<Response>;

type JsonRpcMessage = { jsonrpc?: unknown; id?: JsonRpcId; method?: unknown };

export function createMcpHttpHandler(deps: McpHttpDeps): McpHttpHandler {
  const path = deps.config.path ?? '/mcp';
  const now = deps.now ?? (() => new Date());

  return async (request, context) => {
    const started = performance.now();
    let response: Response;
    try {
      response = await route(request, context);
    } catch (error) {
      deps.logger.error('request_failed', { error: errorKind(error) });
      response = HTTP.internal();
    }
    response.headers.delete('mcp-session-id');
    deps.logger.info('http_request', {
      method: request.method,
      status: response.status,
      duration_ms: Math.round(performance.now() - started),
    });
    return response;
  };

  async function route(request: Request, context: RequestContext): Promise<Response> {
    if (new URL(request.url).pathname !== path) return HTTP.notFound();

    const refused = checkOrigin(request, deps.config);
    if (refused) return HTTP.forbidden(refused);

    if (request.method === 'OPTIONS') return preflight(request);
    if (request.method !== 'POST' && request.method !== 'GET') return HTTP.methodNotAllowed();

    const auth = await authenticate(request.headers.get('authorization'), deps.keys, deps.config.guestDailyLimit > 0);
    if (!auth.ok) {
      deps.logger.info('auth_refused', { reason: auth.reason });
      if (auth.reason === 'missing') return HTTP.missingCredentials();
      return HTTP.unauthorized(auth.reason === 'malformed' ? 'The bearer token is not a chatctx API key.' : 'The API key is invalid or revoked.');
    }
    const caller = auth.caller;
    const subject = await quotaSubject(caller, context);

    const response = request.method === 'GET' ? openStream(request) : await handlePost(request, caller, subject);
    return withCors(request, await withGuestHeaders(response, caller, subject));
  }

  async function handlePost(request: Request, caller: Caller, subject: string): Promise<Response> {
    const accept = request.headers.get('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return HTTP.notAcceptable('application/json, text/event-stream');
    }
    const contentType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/json') return HTTP.unsupportedMediaType();

    const body = await readBody(request, LIMITS.requestBodyMaxBytes);
    if (body === undefined) return HTTP.tooLarge(LIMITS.requestBodyMaxBytes);
    let message: unknown;
    try {
      message = JSON.parse(body);
    } catch {
      return HTTP.badRequest(-32700, 'Parse error: the body is not valid JSON.');
    }
    if (Array.isArray(message)) {
      // JSON-RPC batching was removed from MCP (2025-06-18); one message per POST.
      return HTTP.badRequest(-32600, 'Invalid Request: send one JSON-RPC message per POST (batches are not supported).');
    }
    if (message === null || typeof message !== 'object') {
      return HTTP.badRequest(-32600, 'Invalid Request: the body must be a JSON-RPC message object.');
    }

    const rpc = message as JsonRpcMessage;
    const limit = dailyLimit(caller);
    if (rpc.method === 'tools/call' && rpc.id !== undefined && limit !== null) {
      const decision = await deps.quota.consume(subject, utcDay(now()), limit);
      const headers: Record<string, string> =
        caller.kind === 'guest' ? { 'X-Guest-Quota-Limit': String(limit), 'X-Guest-Quota-Remaining': String(decision.remaining) } : {};
      if (!decision.allowed) {
        deps.logger.info('quota_refused', { caller: caller.kind });
        return HTTP.rateLimited(secondsUntilNextUtcMidnight(now()), headers, rpc.id ?? null);
      }
      // The count is known from the increment: no second read of the counter.
      const response = await dispatch(request, message);
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
      return response;
    }
    return dispatch(request, message);
  }

  /** Hands one parsed message to a fresh SDK server and frames its reply as SSE. */
  async function dispatch(request: Request, message: object): Promise<Response> {
    const server = createMcpServer(deps.invoker);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const reply = await transport.handleRequest(request, { parsedBody: message });
      if (reply.status !== 200 || !(reply.headers.get('content-type') ?? '').includes('application/json')) return reply;
      const payload: unknown = await reply.json();
      return new Response(sseFrame(Array.isArray(payload) ? payload : [payload]), { status: 200, headers: SSE_HEADERS });
    } finally {
      await server.close();
    }
  }

  function openStream(request: Request): Response {
    const accept = request.headers.get('accept') ?? '';
    if (!accept.includes('text/event-stream')) return HTTP.notAcceptable('text/event-stream');
    const encoder = new TextEncoder();
    const mode = deps.config.getStream;
    let timer: ReturnType<typeof setInterval> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        if (mode.mode === 'close') {
          controller.enqueue(encoder.encode(`: connected\nretry: ${mode.retryMs}\n\n`));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(': connected\n\n'));
        timer = setInterval(() => controller.enqueue(encoder.encode(': keepalive\n\n')), mode.keepAliveMs);
        request.signal.addEventListener('abort', () => {
          clearInterval(timer);
          try {
            controller.close();
          } catch {
            // already closed
          }
        });
      },
      cancel() {
        clearInterval(timer);
      },
    });
    return new Response(stream, { status: 200, headers: SSE_HEADERS });
  }

  function dailyLimit(caller: Caller): number | null {
    return caller.kind === 'guest' ? deps.config.guestDailyLimit : caller.dailyQuota;
  }

  async function quotaSubject(caller: Caller, context: RequestContext): Promise<string> {
    return caller.kind === 'guest' ? `guest:${hashClientIp(await deps.pepper(), context.clientIp)}` : `key:${caller.id}`;
  }

  /** Guest headers on answers that did not count a call (handshake, lists, errors): one read. */
  async function withGuestHeaders(response: Response, caller: Caller, subject: string): Promise<Response> {
    if (caller.kind !== 'guest' || response.headers.has('X-Guest-Quota-Remaining')) return response;
    const limit = deps.config.guestDailyLimit;
    const used = await deps.quota.used(subject, utcDay(now()));
    response.headers.set('X-Guest-Quota-Limit', String(limit));
    response.headers.set('X-Guest-Quota-Remaining', String(Math.max(0, limit - used)));
    return response;
  }

  function withCors(request: Request, response: Response): Response {
    const origin = request.headers.get('origin');
    if (origin !== null) {
      // Only allowed origins get this far (checkOrigin ran first).
      response.headers.set('Access-Control-Allow-Origin', origin);
      response.headers.set('Access-Control-Expose-Headers', 'X-Guest-Quota-Limit, X-Guest-Quota-Remaining, Retry-After, WWW-Authenticate');
      response.headers.set('Vary', 'Origin');
    }
    return response;
  }

  function preflight(request: Request): Response {
    return withCors(
      request,
      new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Last-Event-ID',
          'Access-Control-Max-Age': '600',
        },
      }),
    );
  }
}

/** Reads at most `limit` bytes; undefined when the body is larger. */
async function readBody(request: Request, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
