/**
 * Lambda entry of the MCP gateway (`/mcp` and the OAuth endpoints behind API Gateway): wiring only, see
 * `aws/gateway.ts`. Each request runs under the invocation's deadline
 * (`aws/invocation-deadline.ts`), and a handshake starts waking a paused database
 * (`aws/database-wake.ts`).
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createGatewayHandler, gatewayDeps, gatewayOAuthRoutes, type GatewayHandler } from '../aws/gateway.ts';
import { createLambdaObservability } from '../aws/powertools-logger.ts';
import { dataApiSql } from '../aws/aws-adapters.ts';
import { DatabaseWake } from '../aws/database-wake.ts';
import { GATEWAY_MARGIN_MS, withInvocationDeadline } from '../aws/invocation-deadline.ts';
import { GATEWAY_SERVICE } from '../observability/metric-names.ts';

const observability = createLambdaObservability(GATEWAY_SERVICE, { requestPath: true });
let gateway: GatewayHandler | undefined;
let wake: DatabaseWake | undefined;

export const handler = middy((event: APIGatewayProxyEvent, context: Context) => {
  if (!gateway) {
    const deps = gatewayDeps(process.env, observability.logger);
    gateway = createGatewayHandler(deps, gatewayOAuthRoutes(process.env, deps));
  }
  // One attempt, no retries: the request reaching the Data API is the wake-up.
  wake ??= new DatabaseWake({ sql: dataApiSql(process.env, { deadline: () => 0 }), logger: observability.logger });
  const answer = gateway;
  const waking = wake.start(event);
  return withInvocationDeadline(context, { marginMs: GATEWAY_MARGIN_MS }, async () => {
    const result = await answer(event);
    await waking?.();
    return result;
  });
})
  .use(injectLambdaContext(observability.powertools))
  .use(logMetrics(observability.metrics));
