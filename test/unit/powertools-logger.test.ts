/**
 * The gateway's CloudWatch metrics as Powertools publishes them (EMF on stdout):
 * every OAuth log line with a `security_event` counts once in the metric the
 * stack's OAuth alarm reads, under the gateway's service name, and a log line
 * without one counts nothing there.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLambdaObservability } from '../../lambdas/aws/powertools-logger.ts';
import { GATEWAY_SERVICE, METRICS_NAMESPACE, OAUTH_SECURITY_EVENT_METRIC, REQUEST_PATH_FAILURE_METRIC, REQUEST_PATH_SERVICE } from '../../lambdas/observability/metric-names.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** What one publish wrote: the EMF documents among the lines. */
function published(publish: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  publish();
  return lines.flatMap((line) => line.split('\n')).filter((line) => line.includes('_aws')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('gateway metrics', () => {
  it('counts OAuth security events in the metric the alarm reads', () => {
    const { logger, metrics } = createLambdaObservability(GATEWAY_SERVICE);
    const documents = published(() => {
      logger.warn('oauth_token_reuse', { grant_type: 'refresh_token', security_event: 'token_reuse' });
      logger.warn('oauth_throttled', { route: 'consent', security_event: 'throttle' });
      logger.info('oauth_request', { path: '/oauth/token', status: 200 });
      metrics.publishStoredMetrics();
    });
    expect(documents).toHaveLength(1);
    const emf = documents[0]!;
    const directive = (emf._aws as { CloudWatchMetrics: { Namespace: string; Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0]!;
    expect(directive.Namespace).toBe(METRICS_NAMESPACE);
    expect(directive.Metrics.map((m) => m.Name)).toEqual([OAUTH_SECURITY_EVENT_METRIC]);
    expect(emf.service).toBe(GATEWAY_SERVICE);
    expect(emf[OAUTH_SECURITY_EVENT_METRIC]).toEqual([1, 1]);
  });

  it('counts every error line of a request-path function in one metric per stack, and nothing for a wait or an hourly GET', () => {
    const { logger, metrics } = createLambdaObservability('chatctx-search-knowledge', { requestPath: true, env: { CHATCTX_STACK_NAME: 'ChatctxStaging' } });
    const documents = published(() => {
      logger.error('tool_call', { tool: 'search_knowledge', outcome: 'internal', error: 'TypeError' });
      logger.warn('request_failed', { error: 'UnavailableError:unavailable' });
      logger.info('http_request', { method: 'GET', status: 200, duration_ms: 3 });
      metrics.publishStoredMetrics();
    });
    const failures = documents.filter((emf) => REQUEST_PATH_FAILURE_METRIC in emf);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.service).toBe(REQUEST_PATH_SERVICE);
    expect(failures[0]!.stack).toBe('ChatctxStaging');
    expect(failures[0]![REQUEST_PATH_FAILURE_METRIC]).toBe(1);
    // The tool_call error counts its latency under the function's own service; the GET publishes no latency.
    expect(documents.some((emf) => 'request_latency' in emf)).toBe(false);
  });
});
