/**
 * The 2026-07-28 revision of MCP ("modern era"): no `initialize`, every request
 * carries its protocol version and client capabilities in `_meta`, `server/discover`
 * advertises the server, and the `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name`
 * headers must agree with the body. The v2 server SDK (`createMcpHandler` in strict
 * `legacy: 'reject'` mode) owns that wire: header validation (400, -32020), unknown
 * revisions (400, -32022), `resultType` and the cache hints on list results.
 *
 * `mcp-http-handler.ts` keeps everything in front of it (auth, Accept,
 * Content-Type, size, JSON; Host and Origin are the front door's, `endpoint.ts`)
 * and routes only requests that claim the modern envelope here; 2025-era traffic
 * goes through `answerMessage` in `mcp-server.ts`. Both eras build their
 * per-request server with the same `createMcpServer`.
 *
 * Quota: only `tools/call` counts, and only once the SDK has accepted the request
 * (headers valid, tool known), so a refused or malformed request costs nothing and
 * `server/discover` never counts. Over quota the whole answer becomes HTTP 429.
 *
 * `subscriptions/listen` is acknowledged with an empty filter and ended at once:
 * the tools never change while a process runs, so there is nothing to deliver, and
 * no runtime holds a stream for it (a Lambda would bill the idle time).
 */
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { ToolInvoker } from '../ports/tool-invoker.ts';
import type { QuotaOutcome } from '../quota/quota-policy.ts';
import { HTTP, SSE_HEADERS, sseFrame, type JsonRpcId } from './http-responses.ts';
import { SERVER_NAME, SERVER_VERSION, createMcpServer } from './mcp-server.ts';

/** The revision this path serves; the 2025 revisions stay on the legacy path. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

export { LIST_CACHE_TTL_MS } from './mcp-server.ts';

/** Counts one tool call; called only for a `tools/call` the SDK accepted. */
export type ToolCallMeter = () => Promise<QuotaOutcome>;

/** Thrown inside the SDK handler when the meter refuses: the caller turns it into a 429. */
class QuotaRefused extends Error {}

/** True when the request claims the 2026 envelope (or a modern header), so the modern path must answer it. */
export async function isModernRequest(request: Request, parsed: object): Promise<boolean> {
  return !(await isLegacyRequest(request, parsed));
}

/** One request's state the per-request server needs: its meter and what the meter said. */
interface Exchange {
  readonly meter: ToolCallMeter;
  /** Runs this request's tools with its caller's scope. */
  readonly invoker: ToolInvoker;
  outcome?: QuotaOutcome;
}

export interface ModernEndpoint {
  answer(request: Request, parsed: object, meter: ToolCallMeter, invoker: ToolInvoker): Promise<Response>;
}

export function createModernEndpoint(): ModernEndpoint {
  // The SDK hands the factory the Request it was given; the exchange rides on it.
  const exchanges = new WeakMap<Request, Exchange>();
  const handler = createMcpHandler(
    ({ requestInfo }) => {
      const exchange = requestInfo ? exchanges.get(requestInfo) : undefined;
      if (!exchange) throw new Error('modern request without an exchange');
      return createMcpServer(exchange.invoker, async () => {
        exchange.outcome = await exchange.meter();
        if (!exchange.outcome.allowed) throw new QuotaRefused('quota');
      });
    },
    // One JSON answer per request; no SSE keep-alive timers (a Lambda must not hold them).
    { legacy: 'reject', keepAliveMs: 0 },
  );

  return {
    async answer(request, parsed, meter, invoker) {
      const listen = endedSubscription(request, parsed);
      if (listen) return listen;
      const exchange: Exchange = { meter, invoker };
      exchanges.set(request, exchange);
      const response = await handler.fetch(request, { parsedBody: parsed });
      const outcome = exchange.outcome;
      if (!outcome) return response;
      if (!outcome.allowed) return HTTP.rateLimited(outcome.retryAfterSeconds, outcome.headers, requestId(parsed));
      const answered = new Response(response.body, response);
      for (const [name, value] of Object.entries(outcome.headers)) answered.headers.set(name, value);
      return answered;
    },
  };
}

/**
 * A well-formed `subscriptions/listen` answered as acknowledged and gracefully
 * closed; anything else about it (a header that disagrees, another revision) is
 * left to the SDK to refuse.
 */
function endedSubscription(request: Request, parsed: object): Response | undefined {
  const rpc = parsed as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (rpc.method !== 'subscriptions/listen' || (typeof rpc.id !== 'string' && typeof rpc.id !== 'number')) return undefined;
  const version = rpc.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  const headers = request.headers;
  if (version !== MODERN_PROTOCOL_VERSION || headers.get('mcp-protocol-version') !== version || headers.get('mcp-method') !== rpc.method) return undefined;
  const subscription = { 'io.modelcontextprotocol/subscriptionId': rpc.id };
  const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: SERVER_NAME, version: SERVER_VERSION } };
  const messages = [
    { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: subscription, notifications: {} } },
    { jsonrpc: '2.0', id: rpc.id, result: { resultType: 'complete', _meta: { ...subscription, ...serverInfo } } },
  ];
  return new Response(sseFrame(messages), { status: 200, headers: SSE_HEADERS });
}

function requestId(parsed: object): JsonRpcId {
  const id = (parsed as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
