/**
 * Reads a byte stream up to a limit, stopping (and cancelling the stream) as soon
 * as more than the limit has arrived, so an oversized body is never buffered
 * whole. Shared by the MCP endpoint's request bodies (`protocol/read-body.ts`) and
 * the OAuth endpoints' bodies (`oauth/oauth-routes.ts`).
 */

/** The bytes, or undefined when the stream carried more than `limit` bytes. */
export async function readBounded(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | undefined> {
  if (!stream) return new Uint8Array();
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
