/**
 * API Gateway (REST, Lambda proxy) event ⇄ fetch `Request`/`Response`, so the
 * shared core handler runs unchanged on Lambda. The client IP is the one API
 * Gateway observed (`requestContext.identity.sourceIp`), never a client header.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export function toRequest(event: APIGatewayProxyEvent): Request {
  const headers = new Headers();
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    for (const value of values ?? []) headers.append(name, value);
  }
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && !headers.has(name)) headers.set(name, value);
  }
  const host = headers.get('host') ?? event.requestContext.domainName ?? 'localhost';
  const query = new URLSearchParams();
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    for (const value of values ?? []) query.append(name, value);
  }
  const search = query.size > 0 ? `?${query}` : '';
  const method = event.httpMethod.toUpperCase();
  const body =
    event.body === null || event.body === undefined || method === 'GET' || method === 'HEAD'
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64')
        : event.body;
  return new Request(`https://${host}${event.path}${search}`, { method, headers, body });
}

export async function toResult(response: Response): Promise<APIGatewayProxyResult> {
  const multiValueHeaders: Record<string, string[]> = {};
  response.headers.forEach((value, name) => {
    (multiValueHeaders[name] ??= []).push(value);
  });
  return { statusCode: response.status, multiValueHeaders, body: await response.text(), isBase64Encoded: false };
}

export function clientIpOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.identity?.sourceIp ?? 'unknown';
}

/** Public base URL of the API stage the event came through, e.g. https://abc.execute-api…/v1 */
export function stageBaseUrl(event: APIGatewayProxyEvent): string {
  const host = event.headers?.Host ?? event.headers?.host ?? event.requestContext.domainName ?? 'localhost';
  const stage = event.requestContext.stage;
  // Custom domains map the stage away; the default execute-api host keeps it in the path.
  const withStage = host.includes('.execute-api.') && stage ? `/${stage}` : '';
  return `https://${host}${withStage}`;
}
