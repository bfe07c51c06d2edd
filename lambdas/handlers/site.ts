/**
 * Lambda entry serving the public documentation files behind API Gateway, for
 * the stage the request came through (see `site/site-handler.ts`), through the
 * same front door as the gateway (`protocol/endpoint.ts`): a fault of ours is a
 * logged 500 without detail, not a Lambda error (which API Gateway would turn into
 * a 502 and CloudWatch into a function error with the stack trace in the log).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { serveSite } from '../site/site-handler.ts';
import { clientIpOf, stageBaseUrl, toRequest, toResult } from '../aws/api-gateway-adapter.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { readSetting, type Environment } from '../config/settings.ts';
import { createEndpoint } from '../protocol/endpoint.ts';
import type { Logger } from '../ports/logger.ts';

/** API Gateway routes only its own host names and custom domains here, and the files are public: any Host, any Origin. */
const ANY = { allowedHosts: ['*'], allowedOrigins: ['*'] };

/** The site's answer to one API Gateway event. */
export function createSiteHandler(logger: Logger, env: Environment = process.env) {
  const endpoint = createEndpoint({
    guard: ANY,
    site: (request, { baseUrl }) => serveSite(request, { mcpUrl: `${baseUrl}/mcp`, guestDailyLimit: readSetting(env, 'guestDailyLimit') }),
    logger,
  });
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> =>
    toResult(await endpoint(toRequest(event), { clientIp: clientIpOf(event), baseUrl: stageBaseUrl(event) }));
}

export const handler = lambdaEntry('chatctx-site', (logger) => createSiteHandler(logger));
