/**
 * Clients of both MCP eras for one endpoint: the v2 SDK client pinned to the
 * 2026-07-28 revision, negotiating (`auto`), and in its default legacy mode; the
 * v1 SDK client; and raw 2026-07-28 requests with the envelope and the standard
 * headers, for the cases no SDK client sends (mismatched headers, unknown
 * revisions). Every request a client sends is recorded, so tests can count the
 * round trips a connection costs in each era.
 */
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const MODERN = '2026-07-28';

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** One HTTP request a client sent: its verb and, for a POST, the JSON-RPC method. */
export interface Sent {
  readonly verb: string;
  readonly method?: string;
}

/** A fetch that records what goes through it. */
export function recording(inner: Fetch): { fetch: Fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetchImpl: Fetch = async (input, init) => {
    const verb = init?.method ?? (input instanceof Request ? input.method : 'GET');
    let method: string | undefined;
    if (typeof init?.body === 'string') method = (JSON.parse(init.body) as { method?: string }).method;
    sent.push({ verb, method });
    return inner(input, init);
  };
  return { fetch: fetchImpl, sent };
}

export type V2Mode = 'pin' | 'auto' | 'legacy';

export async function connectV2(url: string, mode: V2Mode, fetchImpl: Fetch, key?: string): Promise<Client> {
  const versionNegotiation = mode === 'pin' ? { mode: { pin: MODERN } } : mode === 'auto' ? { mode: 'auto' as const } : undefined;
  const client = new Client({ name: 'chatctx-dual-era', version: '1.0.0' }, versionNegotiation ? { versionNegotiation } : {});
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: fetchImpl,
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : undefined,
  });
  await client.connect(transport);
  return client;
}

export async function connectV1(url: string, fetchImpl: Fetch, key?: string): Promise<V1Client> {
  const client = new V1Client({ name: 'chatctx-dual-era-v1', version: '1.0.0' });
  const transport = new V1Transport(new URL(url), {
    fetch: fetchImpl,
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : undefined,
  });
  await client.connect(transport);
  return client;
}

/** A 2026-07-28 request body: the `_meta` envelope on the params. */
export function modernBody(method: string, params: Record<string, unknown> = {}, id: number | string = 1, version = MODERN) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta } };
}

/** The standard headers a 2026-07-28 client mirrors from the body. */
export function modernHeaders(method: string, name?: string, version = MODERN): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': version,
    'Mcp-Method': method,
    ...(name ? { 'Mcp-Name': name } : {}),
  };
}

/** A raw modern POST through `fetchImpl`: the body, its standard headers, and any overrides. */
export function postModern(
  url: string,
  fetchImpl: Fetch,
  method: string,
  params: Record<string, unknown> = {},
  overrides: { headers?: Record<string, string>; version?: string; key?: string } = {},
): Promise<Response> {
  const name = typeof params.name === 'string' ? params.name : undefined;
  const headers = { ...modernHeaders(method, name, overrides.version), ...overrides.headers };
  if (overrides.key) headers.Authorization = `Bearer ${overrides.key}`;
  return fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(modernBody(method, params, 1, overrides.version)) });
}

/** The JSON-RPC message of an answer, JSON or SSE-framed. */
export async function rpcOf(response: Response): Promise<{ result?: any; error?: { code: number; message: string; data?: any } }> {
  const text = await response.text();
  if (text.startsWith('event:') || text.startsWith(':')) {
    const data = text.split('\n').find((line) => line.startsWith('data: '));
    return JSON.parse(data!.slice(6));
  }
  return JSON.parse(text);
}

/** A tool call of each tool, with arguments that succeed against the starter corpus. */
export const TOOL_CALLS = {
  search_knowledge: { query: 'retry with exponential backoff' },
  get_guidance: { ids: ['does-not-exist'] },
  submit_feedback: { category: 'helpful', source: 'search_knowledge' },
} as const;
