/**
 * The MCP gateway on Lambda: the shared front door (`protocol/endpoint.ts`) between
 * API Gateway proxy events and the AWS adapters. Transport rules, Origin/Host,
 * Accept, auth, quota, initialize, ping, tools/list, notifications and the OAuth
 * endpoints run here; each tools/call is dispatched to its own function through the
 * Lambda ToolInvoker.
 *
 * What a connected client costs while idle: GET is answered before authentication
 * with `: connected` and a one-hour `retry:` hint, then the stream closes, so the
 * official SDK client asks again once an hour and never wakes Aurora or reads
 * DynamoDB for it. Known keys are answered from memory for `keyCacheSeconds`.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createMcpHttpHandler, type McpHttpDeps } from '../protocol/mcp-http-handler.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { oauthKeyResolver, type OAuthKeyResolver } from '../oauth/access-token-resolver.ts';
import { createEndpoint } from '../protocol/endpoint.ts';
import type { OriginPolicy } from '../protocol/request-guards.ts';
import type { UntrustedFetcher } from '../streams/untrusted-fetch.ts';
import { createOAuthRoutes, type OAuthRoutes } from '../oauth/oauth-routes.ts';
import { readSettings, type Environment } from '../config/settings.ts';
import type { Logger } from '../ports/logger.ts';
import { LambdaToolInvoker } from './lambda-tool-invoker.ts';
import { clientIpOf, stageBaseUrl, toRequest, toResult } from './api-gateway-adapter.ts';
import { dataApiSql, pepperSecrets, quotaStore, toolFunctionNames } from './aws-adapters.ts';

/**
 * How long a client waits before reopening a GET stream. A held stream would bill
 * idle Lambda time; a short hint would have every connected client poll. The SDK
 * client schedules its reconnect with `setTimeout`, so this stays far below 2^31 ms.
 */
export const GET_STREAM_RETRY_MS = 3_600_000;

export type GatewayHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The MCP handler's ports plus the front door's Host and Origin allow-lists. */
export interface GatewayDeps extends McpHttpDeps {
  readonly guard: OriginPolicy;
}

/**
 * The gateway over any set of ports; tests pass fixture-backed ones. With `oauth`,
 * the OAuth endpoints answer beside `/mcp`, under the stage's URL.
 */
export function createGatewayHandler(deps: GatewayDeps, oauth?: OAuthRoutes): GatewayHandler {
  const endpoint = createEndpoint({ guard: deps.guard, routes: { mcp: createMcpHttpHandler(deps), oauth }, logger: deps.logger });
  return async (event) => toResult(await endpoint(toRequest(event), { clientIp: clientIpOf(event), baseUrl: stageBaseUrl(event) }));
}

/**
 * The OAuth endpoints over the gateway's database role, pepper, key resolver and
 * quota table (which also counts the per-address OAuth limits).
 */
export function gatewayOAuthRoutes(env: Environment, deps: McpHttpDeps, options: { readonly fetcher?: UntrustedFetcher } = {}): OAuthRoutes {
  const settings = readSettings(env, ['oauthRedirectAllowlist', 'oauthRegistrationsPerHour', 'oauthRegistrationsTotalPerHour', 'oauthPendingClientsMax']);
  const keys = deps.keys as { forget?(): void };
  return createOAuthRoutes({
    sql: dataApiSql(env),
    secrets: deps.secrets,
    keys: deps.keys,
    redirectAllowlist: settings.oauthRedirectAllowlist,
    logger: deps.logger,
    quota: deps.quota,
    registrationsPerHour: settings.oauthRegistrationsPerHour,
    registrationsTotalPerHour: settings.oauthRegistrationsTotalPerHour,
    pendingClientsMax: settings.oauthPendingClientsMax,
    fetcher: options.fetcher,
    // Only this instance's cache: others drop a revoked family's access tokens within `keyCacheSeconds`.
    onRevoked: () => keys.forget?.(),
    now: deps.now,
  });
}

/** Production dependencies from the settings the stack gives the function. */
export function gatewayDeps(env: Environment, logger: Logger): GatewayDeps {
  const settings = readSettings(env, ['guestDailyLimit', 'allowedHosts', 'allowedOrigins', 'keyCacheSeconds']);
  const secrets = pepperSecrets(env);
  return {
    guard: { allowedHosts: settings.allowedHosts, allowedOrigins: settings.allowedOrigins },
    config: {
      guestDailyLimit: settings.guestDailyLimit,
      getStream: { mode: 'close', retryMs: GET_STREAM_RETRY_MS },
    },
    keys: gatewayKeys(env, new KeyRepository(dataApiSql(env), secrets), secrets, settings.keyCacheSeconds * 1000),
    quota: quotaStore(env),
    secrets,
    invoker: new LambdaToolInvoker({ functionNames: toolFunctionNames(env) }),
    logger,
  };
}

/** API keys, and OAuth access tokens by the key and token family they stand for, each answered from memory for `maxAgeMs`. */
function gatewayKeys(env: Environment, repository: KeyRepository, secrets: McpHttpDeps['secrets'], maxAgeMs: number): OAuthKeyResolver {
  return oauthKeyResolver(repository, dataApiSql(env), secrets, { maxAgeMs });
}
