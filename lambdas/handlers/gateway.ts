/**
 * Lambda entry of the MCP gateway (`/mcp` and the OAuth endpoints behind API Gateway): wiring only, see
 * `aws/gateway.ts`. Each request runs under the invocation's deadline
 * (`aws/invocation-deadline.ts`), and a handshake starts waking a paused database
 * (`aws/database-wake.ts`).
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createGatewayHandler, gatewayDeps, gatewayOAuthRoutes, type GatewayHandler } from '../aws/gateway.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { dataApiSql } from '../aws/aws-adapters.ts';
import { DatabaseWake } from '../aws/database-wake.ts';
import { GATEWAY_MARGIN_MS, withInvocationDeadline } from '../aws/invocation-deadline.ts';
import { GATEWAY_SERVICE } from '../observability/metric-names.ts';

export const handler = lambdaEntry(
  GATEWAY_SERVICE,
  (logger) => {
    let gateway: GatewayHandler | undefined;
    let wake: DatabaseWake | undefined;
    return (event: APIGatewayProxyEvent, context: Context) => {
      if (!gateway) {
        const deps = gatewayDeps(process.env, logger);
        gateway = createGatewayHandler(deps, gatewayOAuthRoutes(process.env, deps));
      }
      // One attempt, no retries: the request reaching the Data API is the wake-up.
      wake ??= new DatabaseWake({ sql: dataApiSql(process.env, { deadline: () => 0 }), logger });
      const answer = gateway;
      const waking = wake.start(event);
      return withInvocationDeadline(context, { marginMs: GATEWAY_MARGIN_MS }, async () => {
        const result = await answer(event);
        await waking?.();
        return result;
      });
    };
  },
  { requestPath: true },
);
