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
import { METRICS_NAMESPACE, OAUTH_SECURITY_EVENT_METRIC, REQUEST_PATH_FAILURE_METRIC, REQUEST_PATH_SERVICE } from '../observability/metric-names.ts';
import { readSetting, type Environment } from '../config/settings.ts';

export interface LambdaObservability {
  readonly powertools: PowertoolsLogger;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

export interface ObservabilityOptions {
  /** Whether error-level lines count in `REQUEST_PATH_FAILURE_METRIC` (the gateway and the tools). @default false */
  readonly requestPath?: boolean;
  /** Where the stack's name is read from. @default process.env */
  readonly env?: Environment;
}

export function createLambdaObservability(serviceName: string, options: ObservabilityOptions = {}): LambdaObservability {
  const powertools = new PowertoolsLogger({ serviceName });
  const stack = readSetting(options.env ?? process.env, 'stackName');
  const defaultDimensions = stack ? { stack } : undefined;
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName, defaultDimensions });
  const failures = options.requestPath ? new Metrics({ namespace: METRICS_NAMESPACE, serviceName: REQUEST_PATH_SERVICE, defaultDimensions }) : undefined;
  // Published at once: failures are rare, and a line that ends the invocation must still count.
  const countFailure = () => {
    failures?.addMetric(REQUEST_PATH_FAILURE_METRIC, MetricUnit.Count, 1);
    failures?.publishStoredMetrics();
  };
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
    } else if (event === 'http_request' && typeof fields.duration_ms === 'number' && fields.method !== 'GET') {
      // Not the GET a connected client reopens every hour: it is answered without the
      // database, and counting it would publish a custom metric (USD 0.30 a month) from an idle stack.
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
      error: (event, fields) => {
        countFailure();
        powertools.error(event, clean(fields));
      },
    },
  };
}
