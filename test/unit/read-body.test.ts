/**
 * Request bodies read up to a byte limit (`lambdas/protocol/read-body.ts`): a body
 * of exactly the limit is read and one byte more is not, bytes rather than
 * characters are counted, a declared length over the limit is refused without
 * reading, and a chunked body is cancelled as soon as it passes the limit.
 */
import { describe, expect, it } from 'vitest';
import { readBody } from '../../lambdas/protocol/read-body.ts';

const LIMIT = 64;

function post(body: BodyInit | null, headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1:8787/mcp', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

/** A body sent in `chunks` as they are asked for, recording how many were pulled and whether the reader cancelled it. */
function chunked(chunks: Uint8Array[]) {
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = chunks[seen.pulled++];
        if (next) controller.enqueue(next);
        else controller.close();
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, seen };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('readBody', () => {
  it('reads a body of exactly the limit, and refuses one byte more', async () => {
    expect(await readBody(post('a'.repeat(LIMIT)), LIMIT)).toBe('a'.repeat(LIMIT));
    expect(await readBody(post('a'.repeat(LIMIT + 1)), LIMIT)).toBeUndefined();
  });

  it('counts bytes, not characters', async () => {
    const twoByte = 'é'.repeat(LIMIT / 2);
    expect(await readBody(post(twoByte), LIMIT)).toBe(twoByte);
    expect(await readBody(post(`${twoByte}a`), LIMIT)).toBeUndefined();
  });

  it('reads an absent body as empty text', async () => {
    expect(await readBody(post(null), LIMIT)).toBe('');
  });

  it('refuses a declared Content-Length over the limit without reading a byte', async () => {
    const { body, seen } = chunked([bytes('{}')]);
    expect(await readBody(post(body, { 'Content-Length': String(LIMIT + 1) }), LIMIT)).toBeUndefined();
    expect(seen.pulled).toBe(0);
  });

  it('does not trust a declared length under the limit: the bytes that arrive are counted', async () => {
    const { body, seen } = chunked([bytes('a'.repeat(LIMIT)), bytes('b')]);
    expect(await readBody(post(body, { 'Content-Length': '2' }), LIMIT)).toBeUndefined();
    expect(seen.cancelled).toBe(true);
  });

  it('joins chunks up to exactly the limit, a character split between chunks included', async () => {
    const text = `${'a'.repeat(LIMIT - 2)}é`;
    const whole = bytes(text);
    const { body } = chunked([whole.slice(0, LIMIT - 1), whole.slice(LIMIT - 1)]);
    expect(await readBody(post(body), LIMIT)).toBe(text);
  });

  it('stops a chunked body at the chunk that passes the limit and cancels the rest', async () => {
    const chunk = bytes('a'.repeat(LIMIT / 2));
    const { body, seen } = chunked([chunk, chunk, bytes('b'), chunk, chunk, chunk]);
    expect(await readBody(post(body), LIMIT)).toBeUndefined();
    expect(seen.cancelled).toBe(true);
    // The third chunk passes the limit; the three after it are never asked for.
    expect(seen.pulled).toBe(3);
  });
});
