/**
 * Builds the MCP server that answers one HTTP request, for either era: server
 * identity, the `instructions` agents read (at initialize, or in `server/discover`),
 * `tools/list` from the zod schemas and `tools/call` through the ToolInvoker. Built
 * on the v2 server SDK; a 2025-era request is answered here through its stateless
 * Streamable HTTP transport, a 2026-07-28 one through `modern-era.ts`.
 *
 * A fresh server is built per request (stateless Streamable HTTP); the SDK rejects
 * reusing a connected transport, and nothing here needs to survive a request.
 */
import { randomUUID } from 'node:crypto';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { TOOL_DEFINITIONS, inputJsonSchema, outputJsonSchema } from '../../schema/tools.ts';
import type { ToolInvoker } from '../ports/tool-invoker.ts';
import { toolError } from '../tools/tool-result.ts';
import { SSE_HEADERS, sseFrame } from './http-responses.ts';

export const SERVER_NAME = 'chatctx-knowledge';
export const SERVER_VERSION = '0.1.0';

export const SERVER_INSTRUCTIONS =
  'chatctx holds owner-reviewed engineering guidance with sources. Call search_knowledge before choosing a ' +
  'framework-specific practice, implementing a security control, applying an accessibility pattern, deciding on a ' +
  'testing or reliability strategy, or reviewing code against established practice. Use get_guidance for the full ' +
  'record before acting, and read applies_to, conditions and exceptions. mode "no_match" means the knowledge base ' +
  'has nothing on it: do not invent guidance. Never send secrets, credentials, customer data or private source code. ' +
  'Report unhelpful, wrong, outdated or missing guidance with submit_feedback.';

/** Computed once per process: the schemas never change at run time. */
let toolList: Tool[] | undefined;
export function listTools(): Tool[] {
  toolList ??= TOOL_DEFINITIONS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputJsonSchema(tool) as Tool['inputSchema'],
    outputSchema: outputJsonSchema(tool) as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  }));
  return toolList;
}

const TOOL_NAMES = new Set<string>(TOOL_DEFINITIONS.map((t) => t.name));

/**
 * Why a `tools/call`'s params cannot be run, or undefined when they can. Checked
 * before the call is counted against a quota: a call refused at the protocol level
 * costs nothing.
 */
export function toolCallProblem(params: unknown): string | undefined {
  const call = params as { name?: unknown; arguments?: unknown } | null;
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(call) || typeof call!.name !== 'string' || (call!.arguments !== undefined && !isObject(call!.arguments))) {
    return 'Invalid params: tools/call needs "name" (a string) and "arguments" (an object).';
  }
  if (!TOOL_NAMES.has(call!.name)) return `Unknown tool: ${call!.name.slice(0, 64)}`;
  return undefined;
}

/**
 * One JSON Schema validator for every per-request server: the SDK otherwise builds
 * a new Ajv instance for each, and it only validates elicitation answers, which a
 * tools-only server never asks for.
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/**
 * How long a 2026-07-28 client may reuse `tools/list` and `server/discover`. Both are
 * the same for every caller (no per-key tools), so shared caches may keep them too;
 * an hour bounds how long a deploy that changes a schema takes to reach cached
 * clients. 2025-era answers never carry cache fields.
 */
export const LIST_CACHE_TTL_MS = 3_600_000;

/**
 * Runs before a tool call the SDK accepted: the 2026 path counts the quota here and
 * throws to stop the call. The 2025 path counts before it reaches the server.
 */
export type AdmitToolCall = () => Promise<void>;

export function createMcpServer(invoker: ToolInvoker, admit: AdmitToolCall = async () => {}): Server {
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION, title: 'chatctx' },
    {
      capabilities: { tools: {} },
      instructions: SERVER_INSTRUCTIONS,
      jsonSchemaValidator: SHARED_VALIDATOR,
      cacheHints: {
        'tools/list': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'public' },
        'server/discover': { ttlMs: LIST_CACHE_TTL_MS, cacheScope: 'public' },
      },
    },
  );
  server.setRequestHandler('tools/list', () => ({ tools: listTools() }));
  server.setRequestHandler('tools/call', async (request) => {
    // An unknown tool is a protocol error (the client asked for something that was never listed).
    const problem = toolCallProblem(request.params);
    if (problem) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem);
    await admit();
    const { name, arguments: args } = request.params;
    try {
      // One key per call, made here and nowhere else: every retry below this point repeats it.
      return (await invoker.invoke({ name, arguments: args ?? {}, idempotencyKey: randomUUID() })) as CallToolResult;
    } catch (error) {
      // The invoker itself failed (e.g. a tool Lambda could not be reached): a generic tool error, no details.
      return toolError(error) as CallToolResult;
    }
  });
  return server;
}

/** Hands one parsed 2025-era message to a fresh server and frames its reply as SSE. */
export async function answerMessage(invoker: ToolInvoker, request: Request, message: object): Promise<Response> {
  const server = createMcpServer(invoker);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const reply = await transport.handleRequest(request, { parsedBody: message });
    if (reply.status !== 200 || !(reply.headers.get('content-type') ?? '').includes('application/json')) return reply;
    const payload = (await reply.json()) as { error?: { code?: number } };
    return new Response(sseFrame([withoutInternalDetail(payload)]), { status: 200, headers: SSE_HEADERS });
  } finally {
    await server.close();
  }
}

/**
 * The SDK answers params that fail its schema with -32603 and the schema library's
 * report; our handlers never fail that way (a tool's failure is a tool result), so
 * -32603 here means the params were wrong: say so, without the report.
 */
function withoutInternalDetail(payload: { error?: { code?: number } }): object {
  if (payload.error?.code !== ProtocolErrorCode.InternalError) return payload;
  return { ...payload, error: { code: ProtocolErrorCode.InvalidParams, message: 'Invalid params: they do not match the schema of the method.' } };
}
