/**
 * CORS for browser clients of the MCP endpoint. Only origins that passed the
 * Origin check get here, so echoing the request's `Origin` never opens the endpoint
 * to a site that was not allowed; requests without one get no CORS headers.
 */
const EXPOSED_HEADERS = 'X-Guest-Quota-Limit, X-Guest-Quota-Remaining, Retry-After, WWW-Authenticate';

export function withCors(request: Request, response: Response): Response {
  const origin = request.headers.get('origin');
  if (origin !== null) {
    response.headers.set('Access-Control-Allow-Origin', origin);
    response.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    response.headers.set('Vary', 'Origin');
  }
  return response;
}

/** The answer to an `OPTIONS` preflight: what a browser client may send. */
export function preflight(request: Request): Response {
  return withCors(
    request,
    new Response(null, {
      status: 204,
      headers: {
        'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID',
        'Access-Control-Max-Age': '600',
      },
    }),
  );
}
