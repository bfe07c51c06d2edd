/**
 * The MCP endpoint (`/mcp`) as one fetch-style function: `Request` in, `Response`
 * out. Both runtimes reach it through the front door (`endpoint.ts`), which has
 * already checked Host and Origin and catches what this throws, so transport rules
 * live here once:
 *
 *   method (405) → [GET in `close` mode: Accept (406), stream, no auth]
 *   → auth (401, the caller resolved once) → Accept (406)
 *   → Content-Type (415) → size (413) → JSON (400/-32700) → quota (429)
 *   → a fresh MCP server + stateless transport → SSE-framed response.
 *
 * A POST that claims the 2026-07-28 `_meta` envelope leaves after the JSON check for
 * `modern-era.ts` (the v2 SDK: header validation, discover, cache hints, JSON
 * answers); everything in front of it, auth and quota included, is shared.
 *
 * It does not know PGlite, DynamoDB or Lambda: those sit behind the ports in
 * `McpHttpDeps`. It never issues `Mcp-Session-Id`, and counts only `tools/call`
 * against quotas (a handshake must never be refused for quota). Who is counted and
 * what guests are told is `quota/quota-policy.ts`; CORS is `cors.ts`; the GET
 * stream is `event-stream.ts`.
 */
import { LIMITS } from '../../schema/tools.ts';
import type { QuotaStore } from '../ports/quota-store.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { ToolInvoker } from '../ports/tool-invoker.ts';
import type { Logger } from '../ports/logger.ts';
import { authenticate, type Caller, type KeyResolver } from '../auth/bearer.ts';
import { QuotaPolicy } from '../quota/quota-policy.ts';
import { resourceMetadataUrl } from '../oauth/oauth-routes.ts';
import { ProtocolErrorCode, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { answerMessage, toolCallProblem } from './mcp-server.ts';
import { HTTP, jsonRpcError, rpcError, type JsonRpcId } from './http-responses.ts';
import { preflight, withCors } from './cors.ts';
import { StreamCount, openEventStream, type EventStreamMode } from './event-stream.ts';
import { createModernEndpoint, isModernRequest } from './modern-era.ts';
import { readBody } from './read-body.ts';

/** How long a client refused a GET stream is asked to wait before trying again. */
const STREAM_RETRY_SECONDS = 60;

/** Host and Origin are not here: the front door (`endpoint.ts`) checks them from its own `guard`. */
export interface McpHttpConfig {
  /** Path of the MCP endpoint. @default '/mcp' */
  readonly path?: string;
  /** Tool calls per guest IP per UTC day; 0 turns guest access off. */
  readonly guestDailyLimit: number;
  /** GET stream behaviour (see `event-stream.ts`). */
  readonly getStream: EventStreamMode;
}

export interface McpHttpDeps {
  readonly config: McpHttpConfig;
  readonly keys: KeyResolver;
  readonly quota: QuotaStore;
  readonly secrets: Secrets;
  readonly invoker: ToolInvoker;
  readonly logger: Logger;
  readonly now?: () => Date;
}

export interface RequestContext {
  /** The connection's source address as the socket or API Gateway reports it. */
  readonly clientIp: string;
  /** The public URL the paths hang from: the server's origin, or the API stage's URL. */
  readonly baseUrl: string;
}

export type McpHttpHandler = (request: Request, context: RequestContext) => Promise<Response>;

type JsonRpcMessage = { jsonrpc?: unknown; id?: JsonRpcId; method?: unknown };

export function createMcpHttpHandler(deps: McpHttpDeps): McpHttpHandler {
  const path = deps.config.path ?? '/mcp';
  const quota = new QuotaPolicy({ store: deps.quota, secrets: deps.secrets, guestDailyLimit: deps.config.guestDailyLimit, now: deps.now });
  const streams = new StreamCount();
  const modern = createModernEndpoint();

  return async (request, context) => withCors(request, await answer(request, context));

  async function answer(request: Request, context: RequestContext): Promise<Response> {
    if (request.method === 'OPTIONS') return preflight(request);
    if (request.method !== 'POST' && request.method !== 'GET') return HTTP.methodNotAllowed();
    // A closing stream carries nothing and costs nothing: answer it before auth, so a
    // connected client's reconnects never reach the key store or the quota store.
    if (request.method === 'GET' && deps.config.getStream.mode === 'close') return openStream(request, context.clientIp);

    const auth = await authenticate(request.headers.get('authorization'), deps.keys, quota.guestsAllowed, `${context.baseUrl}${path}`);
    if (!auth.ok) {
      deps.logger.info('auth_refused', { reason: auth.reason });
      // Each 401 names the protected resource metadata (RFC 9728), so a connector can find the authorization server.
      const metadata = resourceMetadataUrl(context.baseUrl, path);
      if (auth.reason === 'missing') return HTTP.missingCredentials(metadata);
      return HTTP.unauthorized(auth.reason === 'malformed' ? 'The bearer token is not a chatctx API key.' : 'The API key is invalid or revoked.', metadata);
    }
    const subject = await quota.subject(auth.caller, context.clientIp);
    const response = request.method === 'GET' ? openStream(request, context.clientIp) : await handlePost(request, auth.caller, subject);
    if (!response.headers.has('X-Guest-Quota-Remaining')) {
      for (const [name, value] of Object.entries(await quota.uncountedHeaders(auth.caller, subject))) response.headers.set(name, value);
    }
    return response;
  }

  function openStream(request: Request, clientIp: string): Response {
    const accept = request.headers.get('accept') ?? '';
    if (!accept.includes('text/event-stream')) return HTTP.notAcceptable('text/event-stream');
    const stream = openEventStream(request, deps.config.getStream, streams, clientIp);
    if (!stream) deps.logger.info('stream_refused', {});
    return stream ?? HTTP.tooManyStreams(STREAM_RETRY_SECONDS);
  }

  async function handlePost(request: Request, caller: Caller, subject: string): Promise<Response> {
    const parsed = await parseMessage(request);
    if (parsed instanceof Response) return parsed;
    // Every tool this request runs is told what its caller may see (never who it is).
    const invoker: ToolInvoker = { invoke: (invocation) => deps.invoker.invoke({ ...invocation, scope: caller.scope }) };
    // A request claiming the 2026-07-28 envelope goes to the modern path; it counts its own tool calls.
    if (await isModernRequest(request, parsed)) return modern.answer(request, parsed, () => quota.consume(caller, subject), invoker);
    const rpc = parsed as JsonRpcMessage;
    if (rpc.method !== 'tools/call' || rpc.id === undefined) return answerMessage(invoker, request, parsed);
    const problem = toolCallProblem((parsed as { params?: unknown }).params);
    if (problem) return rpcError(rpc.id, ProtocolErrorCode.InvalidParams, problem);
    // A revision this server does not speak (a newer client probing) gets the SDK's 400 uncounted, so it can fall back.
    if (!speaksProtocolVersion(request)) return answerMessage(invoker, request, parsed);

    const outcome = await quota.consume(caller, subject);
    if (!outcome.allowed) {
      deps.logger.info('quota_refused', { caller: caller.kind });
      return HTTP.rateLimited(outcome.retryAfterSeconds, outcome.headers, rpc.id ?? null);
    }
    const response = await answerMessage(invoker, request, parsed);
    for (const [name, value] of Object.entries(outcome.headers)) response.headers.set(name, value);
    return response;
  }
}

/** False when the request names an `MCP-Protocol-Version` this server does not support. */
function speaksProtocolVersion(request: Request): boolean {
  const version = request.headers.get('mcp-protocol-version');
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

/** The POST body as one JSON-RPC message object, or the HTTP answer refusing it. */
async function parseMessage(request: Request): Promise<object | Response> {
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
  return message;
}
