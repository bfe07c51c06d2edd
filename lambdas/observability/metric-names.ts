/**
 * Names the Lambda functions' CloudWatch metrics are published under, shared by
 * the functions (`aws/powertools-logger.ts`, the handlers) and the stack's alarms
 * (`lib/operations.ts`), so both sides agree without repeating strings.
 */

/** The CloudWatch namespace of every chatctx metric. */
export const METRICS_NAMESPACE = 'chatctx';

/** The gateway function's service name: the `service` dimension of its metrics. */
export const GATEWAY_SERVICE = 'chatctx-mcp';

/**
 * Counts OAuth log events that matter for security (each log line with a
 * `security_event` field: a replayed code or refresh token, an invalid grant, a
 * refused consent form, a throttled address, a metadata document refused as SSRF,
 * the registration cap reached).
 */
export const OAUTH_SECURITY_EVENT_METRIC = 'oauth_security_event';
