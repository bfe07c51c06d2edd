/**
 * HTTP-level answers of the MCP endpoint: JSON-RPC error bodies with the right
 * status and headers, and SSE framing of JSON-RPC responses. The status for each
 * failure is decided here and nowhere else.
 */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
} as const;

export type JsonRpcId = string | number | null;

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpcId = null,
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** A JSON-RPC error answer to a request, framed like every other answer (HTTP 200, SSE). */
export function rpcError(id: JsonRpcId, code: number, message: string): Response {
  return new Response(sseFrame([{ jsonrpc: '2.0', id, error: { code, message } }]), { status: 200, headers: SSE_HEADERS });
}

/** One SSE event per JSON-RPC message, as the contract's clients parse it. */
export function sseFrame(messages: readonly unknown[]): string {
  return messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join('');
}

export const HTTP = {
  badRequest: (code: number, message: string) => jsonRpcError(400, code, message),
  unauthorized: (description: string, resourceMetadata: string) =>
    jsonRpcError(401, -32001, `Unauthorized: ${description}`, {
      'WWW-Authenticate': `Bearer realm="chatctx", error="invalid_token", error_description="${description}", resource_metadata="${resourceMetadata}"`,
    }),
  missingCredentials: (resourceMetadata: string) =>
    jsonRpcError(401, -32001, 'Unauthorized: this server requires an API key (guest access is disabled).', {
      'WWW-Authenticate': `Bearer realm="chatctx", resource_metadata="${resourceMetadata}"`,
    }),
  forbidden: (message: string) => jsonRpcError(403, -32000, `Forbidden: ${message}`),
  notFound: () => jsonRpcError(404, -32000, 'Not found: the MCP endpoint is /mcp.'),
  methodNotAllowed: () =>
    jsonRpcError(405, -32000, 'Method not allowed: use POST for JSON-RPC and GET for the event stream. No sessions exist to delete.', {
      Allow: 'GET, POST',
    }),
  notAcceptable: (needs: string) => jsonRpcError(406, -32000, `Not Acceptable: send Accept: ${needs}.`),
  unsupportedMediaType: () => jsonRpcError(415, -32000, 'Unsupported Media Type: send Content-Type: application/json.'),
  tooLarge: (limit: number) => jsonRpcError(413, -32000, `Payload Too Large: the request body limit is ${limit} bytes.`),
  rateLimited: (retryAfter: number, headers: Record<string, string>, id: JsonRpcId) =>
    jsonRpcError(429, -32000, 'Daily quota exhausted. Back off until Retry-After, or ask the owner for a higher quota.', { ...headers, 'Retry-After': String(retryAfter) }, id),
  tooManyStreams: (retryAfter: number) =>
    jsonRpcError(429, -32000, 'Too many open event streams: close one, or try again after Retry-After.', { 'Retry-After': String(retryAfter) }),
  internal: () => jsonRpcError(500, -32603, 'Internal error. The request was not completed; try again later.'),
  /** A fault on a documentation path, whose readers expect text, not JSON-RPC. */
  plainInternal: () =>
    new Response('Internal Server Error\n', { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' } }),
  /** Something the request needs is not ready yet (a resuming database): wait `retryAfter` seconds. */
  unavailable: (retryAfter: number, reason: string) =>
    jsonRpcError(503, -32000, `Service Unavailable: ${reason}`, { 'Retry-After': String(retryAfter) }),
};
