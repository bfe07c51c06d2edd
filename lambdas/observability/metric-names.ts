/**
 * Names the Lambda functions' CloudWatch metrics are published under, shared by
 * the functions (`aws/powertools-logger.ts`, the handlers) and the stack's alarms
 * (`lib/operations.ts`), so both sides agree without repeating strings.
 */

/** The CloudWatch namespace of every chatctx metric. */
export const METRICS_NAMESPACE = 'chatctx';

/**
 * The gateway function's service name: the `service` dimension of its metrics.
 * Every metric also carries a `stack` dimension (the stack's name), so two stacks
 * in one region and account never read each other's metrics.
 */
export const GATEWAY_SERVICE = 'chatctx-mcp';

/**
 * Counts OAuth log events that matter for security (each log line with a
 * `security_event` field: a replayed code or refresh token, an invalid grant, a
 * refused consent form, a throttled address, a metadata document refused as SSRF,
 * the registration cap reached).
 */
export const OAUTH_SECURITY_EVENT_METRIC = 'oauth_security_event';

/**
 * Counts error-level log lines of the functions on the request path (the gateway
 * and the three tools): a tool that failed, could not be invoked or was throttled,
 * a quota counter that failed, a request that ended in a 500. One metric for all of
 * them, under `REQUEST_PATH_SERVICE`, so one alarm reads one metric (an alarm is
 * billed per metric it reads); the log line says which function and why.
 */
export const REQUEST_PATH_FAILURE_METRIC = 'request_path_failure';

/** The `service` dimension of `REQUEST_PATH_FAILURE_METRIC`, the same in every request-path function. */
export const REQUEST_PATH_SERVICE = 'chatctx-request-path';
