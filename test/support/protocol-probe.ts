/**
 * What a client of a newer MCP revision sends before it knows what a server
 * speaks: `server/discover`, and requests stamped with a protocol version this
 * server has never heard of. Each runtime must answer every probe with a clean 4xx
 * or a JSON-RPC error (so the client falls back to `initialize`), never a 5xx or a
 * 403, and must not count any of them against a guest's quota.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
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
}

const PROBES: readonly { probe: string; body: unknown; headers: Record<string, string> }[] = [
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
      result?: { protocolVersion?: string };
    };
    answers.push({ probe, status: response.status, code: message.error?.code, negotiated: message.result?.protocolVersion });
  }
  return answers;
}

/** What both runtimes answer: 400 for an unknown header, -32601 for the unknown method, a supported version from initialize. */
export const EXPECTED_PROBE_ANSWERS: readonly ProbeAnswer[] = [
  { probe: 'discover, newer header', status: 400, code: -32000, negotiated: undefined },
  { probe: 'discover, current header', status: 200, code: -32601, negotiated: undefined },
  { probe: 'tools/call, newer header', status: 400, code: -32000, negotiated: undefined },
  { probe: 'initialize, newer version', status: 200, code: undefined, negotiated: LATEST_PROTOCOL_VERSION },
];
