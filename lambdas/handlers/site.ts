/**
 * Lambda entry serving the public documentation files behind API Gateway, for
 * the stage the request came through (see `site/site-handler.ts`).
 *
 * Its error boundary matches the gateway's: the site reads no database, so a
 * failure here is a fault of ours, answered as a logged 500 without detail (not a
 * Lambda error, which API Gateway would turn into a 502 and CloudWatch into a
 * function error with the stack trace in the log).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { serveSite } from '../site/site-handler.ts';
import { stageBaseUrl, toRequest, toResult } from '../aws/api-gateway-adapter.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { readSetting } from '../config/settings.ts';
import { errorKind } from '../observability/logger.ts';
import type { Logger } from '../ports/logger.ts';
import type { Environment } from '../config/settings.ts';

/** The site's answer to one API Gateway event, with its error boundary. */
export function createSiteHandler(logger: Logger, env: Environment = process.env) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      const settings = { mcpUrl: `${stageBaseUrl(event)}/mcp`, guestDailyLimit: readSetting(env, 'guestDailyLimit') };
      return await toResult(serveSite(toRequest(event), settings));
    } catch (error) {
      logger.error('site_request_failed', { error: errorKind(error) });
      return {
        statusCode: 500,
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
        body: 'Internal Server Error\n',
      };
    }
  };
}

export const handler = lambdaEntry('chatctx-site', (logger) => createSiteHandler(logger));
