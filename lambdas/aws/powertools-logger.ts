/**
 * Our `Logger` port on Powertools for AWS Lambda: structured JSON with the Lambda
 * context injected by middleware, plus CloudWatch metrics for the events operators
 * watch (search mode and degradation, quota refusals, tool errors, OAuth security
 * events). Only the scalar
 * fields the core logs pass through; nothing else can reach CloudWatch.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { LogFields, Logger } from '../ports/logger.ts';
import { METRICS_NAMESPACE, OAUTH_SECURITY_EVENT_METRIC } from '../observability/metric-names.ts';

export interface LambdaObservability {
  readonly powertools: PowertoolsLogger;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

export function createLambdaObservability(serviceName: string): LambdaObservability {
  const powertools = new PowertoolsLogger({ serviceName });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  const record = (event: string, fields: LogFields = {}) => {
    if (typeof fields.security_event === 'string') {
      metrics.addMetric(OAUTH_SECURITY_EVENT_METRIC, MetricUnit.Count, 1);
    } else if (event === 'search') {
      metrics.addMetric(`search_${String(fields.mode)}`, MetricUnit.Count, 1);
      if (fields.degraded) metrics.addMetric('search_degraded', MetricUnit.Count, 1);
    } else if (event === 'search_event_failed') {
      metrics.addMetric('search_event_failed', MetricUnit.Count, typeof fields.events === 'number' ? fields.events : 1);
    } else if (event === 'quota_refused') {
      metrics.addMetric('quota_refused', MetricUnit.Count, 1);
    } else if (event === 'tool_call' && typeof fields.duration_ms === 'number') {
      metrics.addMetric(`${String(fields.tool)}_latency`, MetricUnit.Milliseconds, fields.duration_ms);
      if (fields.outcome !== 'ok') metrics.addMetric(`${String(fields.tool)}_error`, MetricUnit.Count, 1);
    } else if (event === 'http_request' && typeof fields.duration_ms === 'number') {
      metrics.addMetric('request_latency', MetricUnit.Milliseconds, fields.duration_ms);
    }
  };
  const clean = (fields: LogFields = {}) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  return {
    powertools,
    metrics,
    logger: {
      info: (event, fields) => {
        record(event, fields);
        powertools.info(event, clean(fields));
      },
      warn: (event, fields) => {
        record(event, fields);
        powertools.warn(event, clean(fields));
      },
      error: (event, fields) => powertools.error(event, clean(fields)),
    },
  };
}
