/**
 * The MCP gateway on Lambda: the shared fetch-style handler between API Gateway
 * proxy events and the AWS adapters. Transport rules, Origin/Host, Accept, auth,
 * quota, initialize, ping, tools/list and notifications run here; each tools/call
 * is dispatched to its own function through the Lambda ToolInvoker.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createMcpHttpHandler, type McpHttpDeps } from '../protocol/mcp-http-handler.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { readSettings, type Environment } from '../config/settings.ts';
import type { Logger } from '../ports/logger.ts';
import { LambdaToolInvoker } from './lambda-tool-invoker.ts';
import { clientIpOf, toRequest, toResult } from './api-gateway-adapter.ts';
import { dataApiSql, pepperSecrets, quotaStore, toolFunctionNames } from './aws-adapters.ts';

export type GatewayHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The gateway over any set of ports; tests pass fixture-backed ones. */
export function createGatewayHandler(deps: McpHttpDeps): GatewayHandler {
  const handle = createMcpHttpHandler(deps);
  return async (event) => toResult(await handle(toRequest(event), { clientIp: clientIpOf(event) }));
}

/** Production dependencies from the settings the stack gives the function. */
export function gatewayDeps(env: Environment, logger: Logger): McpHttpDeps {
  const settings = readSettings(env, ['guestDailyLimit', 'allowedHosts', 'allowedOrigins']);
  const secrets = pepperSecrets(env);
  return {
    config: {
      guestDailyLimit: settings.guestDailyLimit,
      allowedHosts: settings.allowedHosts,
      allowedOrigins: settings.allowedOrigins,
      // A held stream would bill idle Lambda time: say hello, suggest a retry interval, close.
      getStream: { mode: 'close', retryMs: 30_000 },
    },
    keys: new KeyRepository(dataApiSql(env), secrets),
    quota: quotaStore(env),
    secrets,
    invoker: new LambdaToolInvoker({ functionNames: toolFunctionNames(env) }),
    logger,
  };
}
