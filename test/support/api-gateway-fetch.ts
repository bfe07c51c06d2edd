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
