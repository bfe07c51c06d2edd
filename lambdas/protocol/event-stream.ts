/**
 * The answer to GET on the MCP endpoint: a server-sent event stream that carries
 * only comments, because this server never sends requests or notifications of its
 * own. Clients treat a 200 JSON or a 404 as a broken stream and reconnect in a loop,
 * so GET always gets a stream.
 *
 * - `hold` (the local server): `: connected`, then `: keepalive` every interval
 *   until the client goes away. Held streams are capped, overall and per client
 *   address (`StreamCount`), so anonymous clients cannot pile up connections; over
 *   the cap the caller answers 429 with `Retry-After`.
 * - `close` (Lambda, where a held stream bills idle time and keeps the database
 *   awake): `: connected` and a long `retry:` hint, then the stream ends.
 */
import { SSE_HEADERS } from './http-responses.ts';

export type EventStreamMode =
  | {
      readonly mode: 'hold';
      readonly keepAliveMs: number;
      /** Streams held at once. @default 256 */
      readonly maxStreams?: number;
      /** Streams held at once for one client address. @default 8 */
      readonly maxStreamsPerClient?: number;
    }
  | { readonly mode: 'close'; readonly retryMs: number };

/** The held streams, overall and per client address. */
export class StreamCount {
  private total = 0;
  private readonly perClient = new Map<string, number>();

  /** Counts one more stream for `client` if both caps allow it; returns how to give it back. */
  take(client: string, max: number, maxPerClient: number): (() => void) | undefined {
    const mine = this.perClient.get(client) ?? 0;
    if (this.total >= max || mine >= maxPerClient) return undefined;
    this.total += 1;
    this.perClient.set(client, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
    };
  }
}

/** The stream, or undefined when a held stream would go over a cap. */
export function openEventStream(request: Request, mode: EventStreamMode, count: StreamCount, client: string): Response | undefined {
  const encoder = new TextEncoder();
  if (mode.mode === 'close') {
    const body = encoder.encode(`: connected\nretry: ${mode.retryMs}\n\n`);
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  }
  // A client gone before its stream opens (it left while its key was looked up) never aborts
  // again, and the runtime may never read or cancel the body: hold no place and no timer for it.
  if (request.signal.aborted) return new Response(encoder.encode(': connected\n\n'), { status: 200, headers: SSE_HEADERS });
  const release = count.take(client, mode.maxStreams ?? 256, mode.maxStreamsPerClient ?? 8);
  if (!release) return undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  const end = () => {
    clearInterval(timer);
    release();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(': connected\n\n'));
      timer = setInterval(() => controller.enqueue(encoder.encode(': keepalive\n\n')), mode.keepAliveMs);
      request.signal.addEventListener('abort', () => {
        end();
        try {
          controller.close();
        } catch {
          // already closed
        }
      });
    },
    cancel: end,
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}
