/**
 * The one wrapper every Lambda entry uses (`handlers/*.ts`): the Powertools logger
 * with the invocation's context in each line, the function's metrics published at
 * the end of each invocation (only when there are any: an empty publish would log a
 * warning on every hourly GET and documentation request), and a failure that
 * escapes the handler logged as `invocation_failed` with its kind (never its
 * message) before Lambda reports it. What a failure means stays with each entry:
 * HTTP entries answer it themselves (503 or a logged 500), tools as tool errors,
 * admin in its envelope; migrate and the scheduled check let it fail the
 * invocation, which is how CloudFormation and EventBridge hear of it.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import { createLambdaObservability, type ObservabilityOptions } from './powertools-logger.ts';
import { errorKind } from '../observability/logger.ts';
import type { Logger } from '../ports/logger.ts';

export type EntryHandler<E, R> = (event: E, context: Context) => Promise<R>;

/**
 * The Lambda handler for `serviceName`. `build` runs once per cold start with the
 * function's logger; it must not read settings itself (read them in the handler
 * it returns, once), so importing the entry never fails.
 */
export function lambdaEntry<E, R>(serviceName: string, build: (logger: Logger) => EntryHandler<E, R>, options: ObservabilityOptions = {}) {
  const observability = createLambdaObservability(serviceName, options);
  const run = build(observability.logger);
  const publish = () => {
    if (observability.metrics.hasStoredMetrics()) observability.metrics.publishStoredMetrics();
  };
  return middy<E, R>((event: E, context: Context) => run(event, context))
    .use(injectLambdaContext(observability.powertools))
    .use({
      after: publish,
      onError: (request) => {
        observability.logger.error('invocation_failed', { error: errorKind(request.error) });
        publish();
      },
    });
}
