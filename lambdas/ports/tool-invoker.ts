/**
 * The `ToolInvoker` port: how the MCP gateway runs a tool. In-process locally,
 * a Lambda Invoke per tool on AWS. The payload and result are plain JSON so both
 * runtimes carry exactly the same data.
 */
import type { ToolCallResult } from '../tools/tool-result.ts';

export interface ToolInvocation {
  readonly name: string;
  /** The raw `arguments` object from `tools/call`; the tool validates it. */
  readonly arguments: unknown;
}

export interface ToolInvoker {
  invoke(invocation: ToolInvocation): Promise<ToolCallResult>;
}
