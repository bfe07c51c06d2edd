/**
 * Lambda entry of the MCP gateway (API Gateway REST proxy → the shared core).
 * Transport rules, Origin/Host, Accept, auth, quota, initialize, ping, tools/list
 * and notifications run here; each tools/call is dispatched to its own function
 * through the Lambda ToolInvoker. A thin adapter: all logic is in protocol/.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createMcpHttpHandler, type McpHttpDeps } from '../protocol/mcp-http-handler.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { DataApiSql } from '../storage/data-api-sql.ts';
import { DynamoQuotaStore } from '../quota/dynamo-quota-store.ts';
import { SecretsManagerSecrets } from '../secrets/secrets-manager-secrets.ts';
import { LambdaToolInvoker, functionNamesFromEnv } from '../aws/lambda-tool-invoker.ts';
import { clientIpOf, toRequest, toResult } from '../aws/api-gateway-adapter.ts';
import { createLambdaObservability } from '../aws/powertools-logger.ts';
import { databaseEnv, integerEnv, listEnv, requiredEnv } from '../aws/environment.ts';

export type GatewayHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The gateway over any set of ports; tests pass fixture-backed ones. */
export function createGatewayHandler(deps: McpHttpDeps): GatewayHandler {
  const handle = createMcpHttpHandler(deps);
  return async (event) => toResult(await handle(toRequest(event), { clientIp: clientIpOf(event) }));
}

/** Production dependencies from the environment the stack sets (read once per cold start). */
export function gatewayDepsFromEnv(env: NodeJS.ProcessEnv, logger: McpHttpDeps['logger']): McpHttpDeps {
  const sql = new DataApiSql(databaseEnv(env));
  const secrets = new SecretsManagerSecrets({ secretId: requiredEnv(env, 'PEPPER_SECRET_ARN') });
  const pepper = () => secrets.pepper();
  return {
    config: {
      guestDailyLimit: integerEnv(env, 'GUEST_DAILY_LIMIT', 250),
      allowedHosts: listEnv(env, 'ALLOWED_HOSTS', ['*']),
      allowedOrigins: listEnv(env, 'ALLOWED_ORIGINS'),
      // A held stream would bill idle Lambda time: say hello, suggest a retry interval, close.
      getStream: { mode: 'close', retryMs: 30_000 },
    },
    keys: new KeyRepository(sql, pepper),
    quota: new DynamoQuotaStore({ tableName: requiredEnv(env, 'QUOTA_TABLE_NAME') }),
    pepper,
    invoker: new LambdaToolInvoker({ functionNames: functionNamesFromEnv(env) }),
    logger,
  };
}

const observability = createLambdaObservability('chatctx-mcp');
let gateway: GatewayHandler | undefined;

export const handler = middy(async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  gateway ??= createGatewayHandler(gatewayDepsFromEnv(process.env, observability.logger));
  return gateway(event);
})
  .use(injectLambdaContext(observability.powertools))
  .use(logMetrics(observability.metrics));
