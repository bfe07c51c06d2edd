/**
 * The `ToolInvoker` port: how the MCP endpoint runs a tool. In-process locally,
 * a Lambda Invoke per tool on AWS. The payload and the result are plain JSON so
 * both runtimes carry exactly the same data.
 */

/** What a caller may see and do (values and rules: `auth/caller-scope.ts`). */
export interface CallerScope {
  /** Collection ids, ascending and distinct. */
  readonly collections: readonly number[];
  /** Whether the caller may call submit_feedback. */
  readonly feedback: boolean;
}

/** An MCP `tools/call` result: structured content, the same as JSON text, and the error flag. */
export interface ToolCallResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolInvocation {
  readonly name: string;
  /** The raw `arguments` object from `tools/call`; the tool validates it. */
  readonly arguments: unknown;
  /**
   * Random, one per `tools/call`, the same for every retry of it: a tool that
   * writes stores one row however often the call is delivered. Never derived from
   * who is calling (no key, IP or user agent).
   */
  readonly idempotencyKey?: string;
  /** What the caller may see and do; a guest's when absent. Never who the caller is. */
  readonly scope?: CallerScope;
}

export interface ToolInvoker {
  invoke(invocation: ToolInvocation): Promise<ToolCallResult>;
}
