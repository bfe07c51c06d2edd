/**
 * A search that passes its deadline abandons its query's embedding: the bundled
 * encoder's pool takes the abandoned texts off its queue instead of embedding them
 * later, ahead of the questions still waiting, and the calls still waiting get their
 * own vectors.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerPoolEmbedder } from '../../lambdas/embeddings/worker-pool-embedder.ts';

const pool = new WorkerPoolEmbedder(1);

afterAll(async () => {
  await pool.close();
});

describe('abandoned embeddings leave the queue', () => {
  it('drops what an aborted call queued, and still answers the calls that wait', async () => {
    await pool.embed(['load the model first']);
    // The worker takes the first call at once; the rest queue behind it.
    const busy = pool.embed(Array.from({ length: 32 }, (_, i) => `keep the worker busy with text number ${i}`));
    const abandoned = Array.from({ length: 20 }, (_, i) => {
      const controller = new AbortController();
      const call = pool.embed([`a question nobody waits for any more, number ${i}`], controller.signal);
      return { controller, call: call.then(() => 'answered', (error: Error) => error.name) };
    });
    const kept = pool.embed(['how should a service retry a failed call']);
    expect(pool.queuedTexts).toBe(21);
    for (const { controller } of abandoned) controller.abort(new DOMException('deadline', 'TimeoutError'));
    expect(pool.queuedTexts).toBe(1);
    expect(await Promise.all(abandoned.map((a) => a.call))).toEqual(Array(20).fill('TimeoutError'));
    const [vector] = await kept;
    const [again] = await pool.embed(['how should a service retry a failed call']);
    expect(Array.from(vector!)).toEqual(Array.from(again!));
    expect((await busy).length).toBe(32);
    expect(pool.queuedTexts).toBe(0);
  }, 60_000);
});
