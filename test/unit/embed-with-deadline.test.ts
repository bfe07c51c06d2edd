/**
 * embedWithDeadline turns embedder success, failure and slowness into an outcome
 * that search can act on, without throwing and without leaking error messages.
 */
import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { embedWithDeadline } from '../../lambdas/embeddings/embed-with-deadline.ts';

function fakeEmbedder(embed: Embedder['embed']): Embedder {
  return { provider: 'fake', model: 'fake-model', dimensions: 3, embed };
}

describe('embedWithDeadline', () => {
  it('returns the vectors when the embedder answers in time', async () => {
    // Prepare
    const vector = Float32Array.from([0.6, 0.8, 0]);
    const embedder = fakeEmbedder(async (texts) => texts.map(() => vector));

    // Act
    const outcome = await embedWithDeadline(embedder, ['stable list keys'], 800);

    // Assess
    expect(outcome).toEqual({ ok: true, vectors: [vector] });
  });

  it('reports a failure by error name only, never by its message', async () => {
    // Prepare
    class AccessDeniedException extends Error {
      override name = 'AccessDeniedException';
    }
    const secret = 'query text: my password is hunter2';
    const embedder = fakeEmbedder(async () => {
      throw new AccessDeniedException(secret);
    });

    // Act
    const outcome = await embedWithDeadline(embedder, ['my password is hunter2'], 800);

    // Assess
    expect(outcome.ok).toBe(false);
    const reason = outcome.ok ? '' : outcome.reason;
    expect(reason).toBe('The embedding provider failed (AccessDeniedException); only full-text search ran.');
    expect(reason).not.toContain('hunter2');
  });

  it('reports a synchronous throw as a failure instead of throwing', async () => {
    // Prepare
    const embedder = fakeEmbedder(() => {
      throw new TypeError('boom');
    });

    // Act
    const outcome = await embedWithDeadline(embedder, ['query'], 800);

    // Assess
    expect(outcome).toEqual({ ok: false, reason: 'The embedding provider failed (TypeError); only full-text search ran.' });
  });

  it('gives up at the deadline and aborts the embedder', async () => {
    // Prepare
    let received: AbortSignal | undefined;
    const embedder = fakeEmbedder((texts, signal) => {
      received = signal;
      // Ignores the signal on purpose: the deadline must hold anyway.
      return new Promise((resolve) => setTimeout(() => resolve(texts.map(() => new Float32Array(3))), 1_000));
    });
    const started = Date.now();

    // Act
    const outcome = await embedWithDeadline(embedder, ['query'], 50);

    // Assess
    expect(outcome).toEqual({ ok: false, reason: 'Query embedding timed out after 50 ms; only full-text search ran.' });
    expect(Date.now() - started).toBeLessThan(500);
    expect(received?.aborted).toBe(true);
  });

  it('reports a timeout when the embedder rejects because it was aborted', async () => {
    // Prepare
    const embedder = fakeEmbedder(
      (_texts, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    );

    // Act
    const outcome = await embedWithDeadline(embedder, ['query'], 30);

    // Assess
    expect(outcome).toEqual({ ok: false, reason: 'Query embedding timed out after 30 ms; only full-text search ran.' });
  });
});
