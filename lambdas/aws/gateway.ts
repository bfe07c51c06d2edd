/**
 * The MCP gateway on Lambda: the shared fetch-style handler between API Gateway
 * proxy events and the AWS adapters. Transport rules, Origin/Host, Accept, auth,
 * quota, initialize, ping, tools/list and notifications run here; each tools/call
 * is dispatched to its own function through the Lambda ToolInvoker.
 *
 * What a connected client costs while idle: GET is answered before authentication
 * with `: connected` and a one-hour `retry:` hint, then the stream closes, so the
 * official SDK client asks again once an hour and never wakes Aurora or reads
 * DynamoDB for it. Known keys are answered from memory for `keyCacheSeconds`.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createMcpHttpHandler, type McpHttpDeps } from '../protocol/mcp-http-handler.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { CachedKeyResolver } from '../auth/cached-key-resolver.ts';
import { readSettings, type Environment } from '../config/settings.ts';
import type { Logger } from '../ports/logger.ts';
import { LambdaToolInvoker } from './lambda-tool-invoker.ts';
import { clientIpOf, toRequest, toResult } from './api-gateway-adapter.ts';
import { dataApiSql, pepperSecrets, quotaStore, toolFunctionNames } from './aws-adapters.ts';

/**
 * How long a client waits before reopening a GET stream. A held stream would bill
 * idle Lambda time; a short hint would have every connected client poll. The SDK
 * client schedules its reconnect with `setTimeout`, so this stays far below 2^31 ms.
 */
export const GET_STREAM_RETRY_MS = 3_600_000;

export type GatewayHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The gateway over any set of ports; tests pass fixture-backed ones. */
export function createGatewayHandler(deps: McpHttpDeps): GatewayHandler {
  const handle = createMcpHttpHandler(deps);
  return async (event) => toResult(await handle(toRequest(event), { clientIp: clientIpOf(event) }));
}

/** Production dependencies from the settings the stack gives the function. */
export function gatewayDeps(env: Environment, logger: Logger): McpHttpDeps {
  const settings = readSettings(env, ['guestDailyLimit', 'allowedHosts', 'allowedOrigins', 'keyCacheSeconds']);
  const secrets = pepperSecrets(env);
  return {
    config: {
      guestDailyLimit: settings.guestDailyLimit,
      allowedHosts: settings.allowedHosts,
      allowedOrigins: settings.allowedOrigins,
      getStream: { mode: 'close', retryMs: GET_STREAM_RETRY_MS },
    },
    keys: new CachedKeyResolver(new KeyRepository(dataApiSql(env), secrets), { maxAgeMs: settings.keyCacheSeconds * 1000 }),
    quota: quotaStore(env),
    secrets,
    invoker: new LambdaToolInvoker({ functionNames: toolFunctionNames(env) }),
    logger,
  };
}
