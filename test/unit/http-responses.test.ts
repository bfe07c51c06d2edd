/**
 * What `lambdas/protocol/http-responses.ts` decides that a client parses: SSE
 * framing (one `event: message` per JSON-RPC message, each on one `data:` line even
 * when its text holds line breaks), JSON-RPC errors to a request framed like any
 * other answer, and a 429 that keeps the request's id and the quota headers.
 */
import { describe, expect, it } from 'vitest';
import { HTTP, rpcError, sseFrame } from '../../lambdas/protocol/http-responses.ts';

/** How an SSE client splits a body into events and reads each one's data. */
function parseEvents(body: string): { event?: string; data: string }[] {
  return body
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const lines = block.split('\n');
      return {
        event: lines.find((line) => line.startsWith('event: '))?.slice(7),
        data: lines
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n'),
      };
    });
}

describe('sseFrame', () => {
  it('frames each message as its own event, in order, and ends every event with a blank line', () => {
    const messages = [
      { jsonrpc: '2.0', method: 'notifications/progress', params: {} },
      { jsonrpc: '2.0', id: 1, result: {} },
    ];
    const body = sseFrame(messages);
    expect(body.endsWith('\n\n')).toBe(true);
    expect(parseEvents(body)).toEqual(messages.map((m) => ({ event: 'message', data: JSON.stringify(m) })));
  });

  it('keeps text with line breaks, and text that looks like an event, inside one data line', () => {
    const tricky = { jsonrpc: '2.0', id: 2, result: { text: 'one\n\nevent: message\ndata: {"forged":true}\r\ntwo' } };
    const events = parseEvents(sseFrame([tricky]));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data)).toEqual(tricky);
  });

  it('frames nothing as an empty body', () => {
    expect(sseFrame([])).toBe('');
  });
});

describe('errors a client reads', () => {
  it('answers a JSON-RPC error to a request with HTTP 200 and an SSE event carrying its id', async () => {
    const response = rpcError('req-9', -32602, 'Unknown tool: x');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const [event] = parseEvents(await response.text());
    expect(JSON.parse(event!.data)).toEqual({ jsonrpc: '2.0', id: 'req-9', error: { code: -32602, message: 'Unknown tool: x' } });
  });

  it('answers a spent quota with 429, the id it refused, the quota headers and Retry-After', async () => {
    const response = HTTP.rateLimited(120, { 'X-Guest-Quota-Limit': '3', 'X-Guest-Quota-Remaining': '0' }, 7);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('120');
    expect(response.headers.get('x-guest-quota-remaining')).toBe('0');
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000 } });
  });
});
