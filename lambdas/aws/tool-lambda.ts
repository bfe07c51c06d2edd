/**
 * The shape shared by the three tool Lambdas: event `{ "arguments": …,
 * "deadline_ms"?: …, "scope"?: … }` from the gateway's ToolInvoker in, a
 * `ToolCallResult` out. Only the gateway may invoke these functions (IAM), so the
 * caller's scope it sends is trusted; an event without one is answered as a guest.
 * Tool errors are results, so the function itself only fails when something
 * outside the tool breaks.
 *
 * Each invocation runs under a deadline (`invocation-deadline.ts`): the function's
 * remaining time less `TOOL_MARGIN_MS`, or the gateway's `deadline_ms` when that is
 * earlier, so a tool waiting on a resuming database still answers (`unavailable`)
 * before either side times out.
 */
import type { Context } from 'aws-lambda';
import { lambdaEntry } from './lambda-entry.ts';
import { TOOL_MARGIN_MS, withInvocationDeadline } from './invocation-deadline.ts';
import type { Logger } from '../ports/logger.ts';
import type { ToolCallResult } from '../ports/tool-invoker.ts';
import type { ToolCall, ToolHandler } from '../tools/guarded-tool.ts';
import type { Environment } from '../config/settings.ts';
import { GUEST_SCOPE, callerScope, type CallerScope } from '../auth/caller-scope.ts';

export interface ToolEvent {
  readonly arguments?: unknown;
  /** The same for every delivery of one tool call (see `ToolInvocation.idempotencyKey`). */
  readonly idempotency_key?: unknown;
  /** The caller's answer-by instant in epoch milliseconds (the gateway's, less the time the Invoke needs to return). */
  readonly deadline_ms?: unknown;
  /** What the caller may see and do (`auth/caller-scope.ts`): `{ "collections": [ids], "feedback": bool }`. */
  readonly scope?: unknown;
}

/** A Lambda entry that builds the tool once per cold start from the function's settings. */
export function toolLambda(serviceName: string, build: (env: Environment, logger: Logger) => ToolHandler) {
  return lambdaEntry(
    serviceName,
    (logger) => {
      let tool: ToolHandler | undefined;
      return async (event: ToolEvent, context: Context): Promise<ToolCallResult> => {
        tool ??= build(process.env, logger);
        const run = tool;
        const callerDeadline = typeof event?.deadline_ms === 'number' ? event.deadline_ms : undefined;
        return withInvocationDeadline(context, { marginMs: TOOL_MARGIN_MS, callerDeadline }, () => run(event?.arguments ?? {}, toolCallOf(event)));
      };
    },
    { requestPath: true },
  );
}

/** What the tool is told about the call besides its arguments: the idempotency key and the caller's scope. */
export function toolCallOf(event: ToolEvent | undefined): ToolCall {
  return { idempotencyKey: idempotencyKeyOf(event), scope: scopeOf(event) };
}

/** The caller's scope the gateway sent; a guest's when the event carries none. */
function scopeOf(event: ToolEvent | undefined): CallerScope {
  const scope = event?.scope as { collections?: unknown; feedback?: unknown } | undefined;
  return scope && typeof scope === 'object' ? callerScope(scope.collections, scope.feedback) : GUEST_SCOPE;
}

/** The event's idempotency key when it is a plausible one; otherwise the call simply has none. */
function idempotencyKeyOf(event: ToolEvent | undefined): string | undefined {
  const key = event?.idempotency_key;
  return typeof key === 'string' && key.length > 0 && key.length <= 128 ? key : undefined;
}
