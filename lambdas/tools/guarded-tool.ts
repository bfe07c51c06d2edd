/**
 * Wraps one tool's work: success becomes a structured result, any error a stable
 * `isError` result, and each call is logged (tool, outcome, duration; never input).
 * Only `internal` outcomes are logged at error level, so bad arguments from callers
 * cannot flood the error log.
 */
import type { Logger } from '../ports/logger.ts';
import { errorKind } from '../observability/logger.ts';
import type { ToolDefinition } from '../../schema/tools.ts';
import type { ToolCallResult } from '../ports/tool-invoker.ts';
import { toolError, toolErrorCode, toolSuccess } from './tool-result.ts';
import type { CallerScope } from '../ports/tool-invoker.ts';

export type ToolName = ToolDefinition['name'];
/** What a tool knows about the call besides its arguments. */
export interface ToolCall {
  /** See `ToolInvocation.idempotencyKey`. */
  readonly idempotencyKey?: string;
  /** What the caller may see and do. @default a guest's (`GUEST_SCOPE`) */
  readonly scope?: CallerScope;
}
export type ToolHandler = (args: unknown, call?: ToolCall) => Promise<ToolCallResult>;

export function guardedTool(name: ToolName, logger: Logger, run: (args: unknown, call: ToolCall) => Promise<object>): ToolHandler {
  return async (args, call = {}) => {
    const started = performance.now();
    try {
      const result = toolSuccess(await run(args, call));
      logger.info('tool_call', { tool: name, outcome: 'ok', duration_ms: Math.round(performance.now() - started) });
      return result;
    } catch (error) {
      const code = toolErrorCode(error);
      const log = code === 'internal' ? logger.error : logger.info;
      log('tool_call', { tool: name, outcome: code, error: code === 'internal' ? errorKind(error) : undefined, duration_ms: Math.round(performance.now() - started) });
      return toolError(error);
    }
  };
}
