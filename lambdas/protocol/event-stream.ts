/**
 * The answer to GET on the MCP endpoint: a server-sent event stream that carries
 * only comments, because this server never sends requests or notifications of its
 * own. Clients treat a 200 JSON or a 404 as a broken stream and reconnect in a loop,
 * so GET always gets a stream.
 *
 * - `hold` (the local server): `: connected`, then `: keepalive` every interval
 *   until the client goes away.
 * - `close` (Lambda, where a held stream bills idle time and keeps the database
 *   awake): `: connected` and a long `retry:` hint, then the stream ends.
 */
import { SSE_HEADERS } from './http-responses.ts';

export type EventStreamMode = { readonly mode: 'hold'; readonly keepAliveMs: number } | { readonly mode: 'close'; readonly retryMs: number };

export function openEventStream(request: Request, mode: EventStreamMode): Response {
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (mode.mode === 'close') {
        controller.enqueue(encoder.encode(`: connected\nretry: ${mode.retryMs}\n\n`));
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(': connected\n\n'));
      timer = setInterval(() => controller.enqueue(encoder.encode(': keepalive\n\n')), mode.keepAliveMs);
      request.signal.addEventListener('abort', () => {
        clearInterval(timer);
        try {
          controller.close();
        } catch {
          // already closed
        }
      });
    },
    cancel() {
      clearInterval(timer);
    },
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}
