/**
 * Reads a request body up to a byte limit, refusing early on a declared length
 * over it and stopping the read as soon as the limit is passed, so an oversized
 * body is never buffered whole.
 */

import { readBounded } from '../streams/bounded-read.ts';

/** The body as text, or undefined when it is larger than `limit` bytes. */
export async function readBody(request: Request, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) return undefined;
  const bytes = await readBounded(request.body, limit);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}
