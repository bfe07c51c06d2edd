/**
 * `ToolInvoker` that calls the tool functions in this process (the local runtime).
 */
import type { ToolInvocation, ToolInvoker } from '../ports/tool-invoker.ts';
import type { ToolCallResult } from '../ports/tool-invoker.ts';
import type { ToolHandler, ToolName } from './guarded-tool.ts';

export class InProcessToolInvoker implements ToolInvoker {
  constructor(private readonly handlers: Record<ToolName, ToolHandler>) {}

  // Async like every other adapter: an unknown tool is a rejected promise, never a throw mid-call.
  async invoke(invocation: ToolInvocation): Promise<ToolCallResult> {
    const handler = this.handlers[invocation.name as ToolName];
    if (!handler) throw new Error(`No handler for tool ${invocation.name}`);
    return handler(invocation.arguments, { idempotencyKey: invocation.idempotencyKey, scope: invocation.scope });
  }
}
