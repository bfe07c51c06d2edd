/**
 * Lambda entry serving the public documentation files behind API Gateway, for
 * the stage the request came through (see `site/site-handler.ts`).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { serveSite } from '../site/site-handler.ts';
import { stageBaseUrl, toRequest, toResult } from '../aws/api-gateway-adapter.ts';
import { readSetting } from '../config/settings.ts';

export function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const settings = { mcpUrl: `${stageBaseUrl(event)}/mcp`, guestDailyLimit: readSetting(process.env, 'guestDailyLimit') };
  return toResult(serveSite(toRequest(event), settings));
}
