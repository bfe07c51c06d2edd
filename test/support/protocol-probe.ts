/**
 * What a client of a newer MCP revision sends before it knows what a server
 * speaks: `server/discover` with and without the 2026-07-28 `_meta` envelope, and
 * requests whose `MCP-Protocol-Version` header names 2026-07-28 without the
 * envelope. A well-formed 2026 discover gets a real answer; every malformed probe
 * gets a clean 4xx or JSON-RPC error, never a 5xx or a 403; none is counted
 * against a guest's quota.
 */
import { parseSse } from './mcp-client.ts';

export const NEWER_REVISION = '2026-07-28';

export type RawPost = (body: unknown, headers: Record<string, string>) => Promise<Response>;

export interface ProbeAnswer {
  readonly probe: string;
  readonly status: number;
  /** The JSON-RPC error code, if the answer carried one. */
  readonly code?: number;
  /** The protocol version `initialize` settled on, if the probe was an initialize. */
  readonly negotiated?: string;
  /** The versions `server/discover` advertised, if it answered. */
  readonly supported?: readonly string[];
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': NEWER_REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'probe', version: '1' },
};

const PROBES: readonly { probe: string; body: unknown; headers: Record<string, string> }[] = [
  {
    probe: 'discover, 2026 envelope',
    body: { jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: ENVELOPE } },
    headers: { 'MCP-Protocol-Version': NEWER_REVISION, 'Mcp-Method': 'server/discover' },
  },
  { probe: 'discover, newer header', body: { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }, headers: { 'MCP-Protocol-Version': NEWER_REVISION } },
  { probe: 'discover, current header', body: { jsonrpc: '2.0', id: 2, method: 'server/discover', params: {} }, headers: { 'MCP-Protocol-Version': '2025-06-18' } },
  {
    probe: 'tools/call, newer header',
    body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } },
    headers: { 'MCP-Protocol-Version': NEWER_REVISION },
  },
  {
    probe: 'initialize, newer version',
    body: { jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: NEWER_REVISION, capabilities: {}, clientInfo: { name: 'probe', version: '1' } } },
    headers: { 'MCP-Protocol-Version': NEWER_REVISION },
  },
];

/** Sends every probe and reports what came back. */
export async function probeNewerRevision(post: RawPost): Promise<ProbeAnswer[]> {
  const answers: ProbeAnswer[] = [];
  for (const { probe, body, headers } of PROBES) {
    const response = await post(body, headers);
    const text = await response.text();
    const message = (text.startsWith('event:') ? parseSse(text)[0] : JSON.parse(text)) as {
      error?: { code: number };
      result?: { protocolVersion?: string; supportedVersions?: string[] };
    };
    const { error, result } = message;
    answers.push({ probe, status: response.status, code: error?.code, negotiated: result?.protocolVersion, supported: result?.supportedVersions });
  }
  return answers;
}

/**
 * What both runtimes answer: the 2026 discover is served; a newer header without
 * the envelope is a malformed 2026 request (400, -32602), or a header that
 * contradicts the body (400, -32020) for an initialize; discover without the
 * envelope is a 2025 request for a method 2025 does not have (-32601).
 */
export const EXPECTED_PROBE_ANSWERS: readonly ProbeAnswer[] = [
  { probe: 'discover, 2026 envelope', status: 200, code: undefined, negotiated: undefined, supported: [NEWER_REVISION] },
  { probe: 'discover, newer header', status: 400, code: -32602, negotiated: undefined, supported: undefined },
  { probe: 'discover, current header', status: 200, code: -32601, negotiated: undefined, supported: undefined },
  { probe: 'tools/call, newer header', status: 400, code: -32602, negotiated: undefined, supported: undefined },
  { probe: 'initialize, newer version', status: 400, code: -32020, negotiated: undefined, supported: undefined },
];
