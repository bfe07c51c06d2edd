/**
 * `ToolInvoker` that runs each tool in its own Lambda function (the AWS runtime).
 *
 * What it owns:
 * - The wire format between the MCP gateway and a tool function: a synchronous
 *   (`RequestResponse`) Invoke with the payload `{"arguments": <raw arguments>,
 *   "idempotency_key": <the call's key>}` (the same key on every retry of a call),
 *   answered with a JSON `ToolCallResult` (the tool function already turns its
 *   own failures, validation included, into `isError` results).
 * - Which function serves which tool (`functionNames`; the gateway reads them from
 *   its settings, see `aws-adapters.ts`).
 * - The gateway's deadline (`invocation-deadline.ts`): sent as `deadline_ms`, less
 *   `INVOKE_RETURN_MS`, so the tool answers in time for the gateway to answer. A
 *   tool that answered `unavailable` (its database still resuming when its own,
 *   shorter, timeout came near; nothing was done) is invoked again while the
 *   gateway has at least `MIN_RETRY_MS` left: a resume longer than a tool
 *   function's timeout still ends in a result within one API Gateway request.
 * - Containment: a function error (`FunctionError`, e.g. a crash or timeout), a
 *   payload that is not a tool result, or an SDK failure becomes one generic
 *   `internal` tool error. The function's error text, stack or payload never
 *   reaches the caller; the optional logger gets only the tool name and the kind
 *   of failure.
 *
 * What it does not do:
 * - Validate arguments (the tool does) or retry any other failure (the SDK's own
 *   retries apply to throttling and transport errors; a tool call is not retried on
 *   top of that).
 * - Accept unknown tool names: the MCP layer rejects those before invoking, so an
 *   unknown name here is a programming error and throws.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { AppError } from '../errors/app-error.ts';
import { errorKind, silentLogger } from '../observability/logger.ts';
import type { Logger } from '../ports/logger.ts';
import type { ToolCallResult, ToolInvocation, ToolInvoker } from '../ports/tool-invoker.ts';
import type { ToolName } from '../tools/guarded-tool.ts';
import { toolError } from '../tools/tool-result.ts';
import type { RetryClock } from '../storage/data-api-retry.ts';
import { INVOCATION_CLOCK, INVOKE_RETURN_MS, currentDeadline } from './invocation-deadline.ts';

/** Time a second tool invocation needs at least, for it to be worth starting. */
export const MIN_RETRY_MS = 2_000;
/** Pause before invoking a tool again after `unavailable`. */
const RETRY_PAUSE_MS = 250;

export type LambdaToolName = ToolName;

export const TOOL_UNREACHABLE_MESSAGE = 'The tool could not be reached. Try again later.';

export interface LambdaToolInvokerOptions {
  client?: LambdaClient;
  functionNames: Record<LambdaToolName, string>;
  /** Told the tool and failure kind when a call fails; never the payload. */
  logger?: Logger;
  /** The gateway's answer-by instant (epoch ms) for the running request. @default the invocation's (`currentDeadline`) */
  deadline?: () => number | undefined;
  /** @default the invocation's clock */
  clock?: RetryClock;
}

export class LambdaToolInvoker implements ToolInvoker {
  private readonly client: LambdaClient;
  private readonly functionNames: Record<LambdaToolName, string>;
  private readonly logger: Logger;
  private readonly deadline: () => number | undefined;
  private readonly clock: RetryClock;

  constructor(options: LambdaToolInvokerOptions) {
    this.client = options.client ?? new LambdaClient({});
    this.functionNames = { ...options.functionNames };
    this.logger = options.logger ?? silentLogger;
    this.deadline = options.deadline ?? currentDeadline;
    this.clock = options.clock ?? INVOCATION_CLOCK;
  }

  async invoke(invocation: ToolInvocation): Promise<ToolCallResult> {
    const tool = invocation.name;
    if (!Object.hasOwn(this.functionNames, tool)) throw new Error(`No Lambda function for tool ${tool}`);
    const functionName = this.functionNames[tool as LambdaToolName];
    const deadline = this.deadline();
    for (;;) {
      const result = await this.invokeOnce(functionName, invocation, deadline);
      if (!isUnavailable(result) || deadline === undefined || deadline - this.clock.now() < MIN_RETRY_MS + RETRY_PAUSE_MS) return result;
      this.logger.info('tool_retry_unavailable', { tool });
      await this.clock.sleep(RETRY_PAUSE_MS);
    }
  }

  private async invokeOnce(functionName: string, invocation: ToolInvocation, deadline: number | undefined): Promise<ToolCallResult> {
    const tool = invocation.name;
    const { idempotencyKey, scope } = invocation;
    const event = { arguments: invocation.arguments, ...(deadline === undefined ? {} : { deadline_ms: deadline - INVOKE_RETURN_MS }), ...(scope ? { scope } : {}) };
    let output;
    try {
      output = await this.client.send(
        new InvokeCommand({
          FunctionName: functionName,
          InvocationType: 'RequestResponse',
          Payload: new TextEncoder().encode(JSON.stringify({ ...event, idempotency_key: idempotencyKey })),
        }),
      );
    } catch (error) {
      return this.unreachable(tool, 'invoke_failed', errorKind(error));
    }
    if (output.FunctionError) return this.unreachable(tool, 'function_error', output.FunctionError);

    const result = decodeToolResult(output.Payload);
    if (!result) return this.unreachable(tool, 'bad_payload');
    return result;
  }

  private unreachable(tool: string, reason: string, kind?: string): ToolCallResult {
    this.logger.error('tool_invoke_failed', { tool, reason, kind });
    return toolError(new AppError('internal', TOOL_UNREACHABLE_MESSAGE));
  }
}

/** The payload as a `ToolCallResult`, or undefined when it is not one. */
function decodeToolResult(payload: Uint8Array | undefined): ToolCallResult | undefined {
  if (!payload || payload.byteLength === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch {
    return undefined;
  }
  if (!isRecord(value) || !Array.isArray(value.content) || !isRecord(value.structuredContent)) return undefined;
  const contentOk = value.content.every((item) => isRecord(item) && item.type === 'text' && typeof item.text === 'string');
  if (!contentOk) return undefined;
  if (value.isError !== undefined && typeof value.isError !== 'boolean') return undefined;
  return value as ToolCallResult;
}

/** True for a tool's `unavailable` answer: nothing was done, and the same call may be repeated. */
function isUnavailable(result: ToolCallResult): boolean {
  const error = result.isError ? (result.structuredContent as { error?: { code?: unknown } }).error : undefined;
  return error?.code === 'unavailable';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
