/**
 * Embeds query texts under a deadline without ever throwing: search uses the
 * vectors when they arrive in time and otherwise runs full-text search alone,
 * reporting why in a reason safe to show the caller. Reasons name the error
 * (its name/code) but never quote its message, which may echo the input.
 */
import { errorKind } from '../observability/logger.ts';
import type { Embedder } from '../ports/embedder.ts';

export type EmbedOutcome = { ok: true; vectors: Float32Array[] } | { ok: false; reason: string };

export async function embedWithDeadline(
  embedder: Embedder,
  texts: readonly string[],
  timeoutMs: number,
): Promise<EmbedOutcome> {
  const timeoutReason = `Query embedding timed out after ${timeoutMs} ms; only full-text search ran.`;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<EmbedOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException(timeoutReason, 'TimeoutError'));
      resolve({ ok: false, reason: timeoutReason });
    }, timeoutMs);
  });

  const attempt = (async (): Promise<EmbedOutcome> => {
    try {
      const vectors = await embedder.embed(texts, controller.signal);
      if (vectors.length !== texts.length) {
        return { ok: false, reason: `The embedding provider returned ${vectors.length} vectors for ${texts.length} texts; only full-text search ran.` };
      }
      return { ok: true, vectors };
    } catch (error) {
      if (controller.signal.aborted) return { ok: false, reason: timeoutReason };
      return { ok: false, reason: `The embedding provider failed (${errorKind(error)}); only full-text search ran.` };
    }
  })();

  try {
    return await Promise.race([attempt, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
