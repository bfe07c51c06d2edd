/**
 * Lambda entry serving the public documentation files behind API Gateway. The
 * files name the MCP URL of the stage they are served from, so they are rendered
 * per base URL (and cached for the life of the container).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createSiteHandler, type SiteHandler } from '../site/site-handler.ts';
import { stageBaseUrl, toRequest, toResult } from '../aws/api-gateway-adapter.ts';
import { integerEnv } from '../aws/environment.ts';

const sites = new Map<string, SiteHandler>();

export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const base = stageBaseUrl(event);
  let site = sites.get(base);
  if (!site) {
    site = createSiteHandler({ mcpUrl: `${base}/mcp`, guestDailyLimit: integerEnv(process.env, 'GUEST_DAILY_LIMIT', 250) });
    sites.set(base, site);
  }
  const response = site(toRequest(event)) ?? new Response('Not found', { status: 404, headers: { 'Content-Type': 'text/plain' } });
  return toResult(response);
}
