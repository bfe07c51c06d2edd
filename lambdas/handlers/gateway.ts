/**
 * Lambda entry of the MCP gateway (`/mcp` behind API Gateway): wiring only, see
 * `aws/gateway.ts`.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createGatewayHandler, gatewayDeps, type GatewayHandler } from '../aws/gateway.ts';
import { createLambdaObservability } from '../aws/powertools-logger.ts';

const observability = createLambdaObservability('chatctx-mcp');
let gateway: GatewayHandler | undefined;

export const handler = middy((event: APIGatewayProxyEvent) => {
  gateway ??= createGatewayHandler(gatewayDeps(process.env, observability.logger));
  return gateway(event);
})
  .use(injectLambdaContext(observability.powertools))
  .use(logMetrics(observability.metrics));
