/**
 * A `fetch` that goes through an API Gateway Lambda handler instead of the network:
 * each `Request` becomes the REST proxy event API Gateway would send, and the
 * handler's result becomes the `Response`. Lets the official MCP SDK client talk to
 * the real gateway entry in process. Counts what passes, by method.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export const GATEWAY_HOST = 'abc123.execute-api.us-east-1.amazonaws.com';
export const GATEWAY_URL = `https://${GATEWAY_HOST}/mcp`;

export type ProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

let requestCounter = 0;

/** What API Gateway's REST proxy integration sends for an HTTP request. */
export async function toProxyEvent(request: Request, sourceIp: string, requestId = `req-${++requestCounter}`): Promise<APIGatewayProxyEvent> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
    multiValueHeaders[name] = [value];
  });
  headers.Host = GATEWAY_HOST;
  const body = request.method === 'GET' ? null : await request.text();
  return {
    httpMethod: request.method,
    path: url.pathname,
    resource: url.pathname,
    headers,
    multiValueHeaders,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: { stage: 'v1', domainName: GATEWAY_HOST, requestId, identity: { sourceIp } } as APIGatewayProxyEvent['requestContext'],
  };
}

export interface GatewayFetch {
  readonly fetch: typeof fetch;
  /** Requests handed to the handler, by HTTP method. */
  readonly counts: Record<string, number>;
}

export function gatewayFetch(handler: ProxyHandler, sourceIp = '198.51.100.7'): GatewayFetch {
  const counts: Record<string, number> = {};
  const fetchViaHandler: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    counts[request.method] = (counts[request.method] ?? 0) + 1;
    const result = await handler(await toProxyEvent(request, sourceIp));
    const headers = new Headers();
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) for (const v of values) headers.append(name, String(v));
    const empty = result.statusCode === 202 || result.statusCode === 204 || result.body === '';
    return new Response(empty ? null : result.body, { status: result.statusCode, headers });
  };
  return { fetch: fetchViaHandler, counts };
}

/** The stage the stack deploys: on the API's own host every path sits under it. */
const STAGE = 'v1';

/**
 * A fetch through the handler as API Gateway's REST stage serves it, on either
 * host: on the API's own host (`GATEWAY_HOST`) paths under `/v1` reach the
 * function without that prefix and others get API Gateway's 403; on a custom
 * domain mapped to the stage, paths reach it as they are. The query string is
 * passed as API Gateway splits it, and redirects are returned, not followed.
 */
export function stageFetch(handler: ProxyHandler, options: { readonly sourceIp?: string; readonly host?: string } = {}): typeof fetch {
  const host = options.host ?? GATEWAY_HOST;
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const ownHost = host === GATEWAY_HOST;
    if (ownHost && !url.pathname.startsWith(`/${STAGE}/`)) return Response.json({ message: 'Missing Authentication Token' }, { status: 403 });
    const event = await toProxyEvent(request, options.sourceIp ?? '203.0.113.9');
    const path = ownHost ? url.pathname.slice(STAGE.length + 1) : url.pathname;
    const query: Record<string, string[]> = {};
    for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
    event.headers.Host = host;
    event.path = path;
    event.resource = path;
    event.multiValueQueryStringParameters = url.search ? query : null;
    event.requestContext = { ...event.requestContext, domainName: host };
    const result = await handler(event);
    const headers = new Headers();
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) for (const v of values) headers.append(name, String(v));
    const empty = [202, 204, 302].includes(result.statusCode) || result.body === '';
    return new Response(empty ? null : result.body, { status: result.statusCode, headers });
  };
}
