/**
 * readBounded: a body up to the limit is read whole; a larger one, even one that
 * never ends, is given up as soon as the limit is passed, its stream cancelled,
 * and never buffered whole.
 */
import { describe, expect, it } from 'vitest';
import { readBounded } from '../../lambdas/streams/bounded-read.ts';

/** A stream of `chunks` chunks of `size` bytes each (endless without `chunks`), counting pulls and cancels. */
function chunked(size: number, chunks = Number.POSITIVE_INFINITY) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks) return controller.close();
      seen.pulled += 1;
      controller.enqueue(new Uint8Array(size).fill(seen.pulled));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe('readBounded', () => {
  it('reads a body of exactly the limit whole, in order', async () => {
    const { stream, seen } = chunked(4, 3);
    const bytes = await readBounded(stream, 12);
    expect([...bytes!]).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(seen.cancelled).toBe(false);
  });

  it('gives up one byte over the limit and cancels the stream', async () => {
    const { stream, seen } = chunked(4, 3);
    expect(await readBounded(stream, 11)).toBeUndefined();
    expect(seen.cancelled).toBe(true);
  });

  it('stops reading a body that never ends once it passes the limit', async () => {
    const { stream, seen } = chunked(1024);
    expect(await readBounded(stream, 10_000)).toBeUndefined();
    expect(seen.cancelled).toBe(true);
    // The chunks that passed the limit, and at most the few the stream queued ahead.
    expect(seen.pulled).toBeLessThan(15);
  });

  it('reads no body as empty', async () => {
    expect(await readBounded(null, 10)).toEqual(new Uint8Array());
  });
});
