/**
 * The shape shared by the three tool Lambdas: event `{ "arguments": … }` from the
 * gateway's ToolInvoker in, a `ToolCallResult` out. Tool errors are results, so
 * the function itself only fails when something outside the tool breaks.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { createLambdaObservability } from './powertools-logger.ts';
import type { Logger } from '../ports/logger.ts';
import type { ToolCallResult } from '../ports/tool-invoker.ts';
import type { ToolHandler } from '../tools/guarded-tool.ts';
import type { Environment } from '../config/settings.ts';

export interface ToolEvent {
  readonly arguments?: unknown;
}

/** A middy handler that builds the tool once per cold start from the function's settings. */
export function toolLambda(serviceName: string, build: (env: Environment, logger: Logger) => ToolHandler) {
  const observability = createLambdaObservability(serviceName);
  let tool: ToolHandler | undefined;
  return middy(async (event: ToolEvent): Promise<ToolCallResult> => {
    tool ??= build(process.env, observability.logger);
    return tool(event?.arguments ?? {});
  })
    .use(injectLambdaContext(observability.powertools))
    .use(logMetrics(observability.metrics));
}

