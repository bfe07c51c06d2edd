/**
 * `chatctx serve` starts the bundled encoder's first thread before it loads the rest
 * of the server (lambdas/embeddings/encoder-head-start.ts): the first pool that needs
 * a thread takes that one, which embeds as a thread the pool starts itself would, and
 * a thread nobody takes is stopped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dropEncoderThread, startEncoderThread, takeEncoderThread } from '../../lambdas/embeddings/encoder-head-start.ts';
import { WorkerPoolEmbedder } from '../../lambdas/embeddings/worker-pool-embedder.ts';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';

const pools: WorkerPoolEmbedder[] = [];

afterEach(async () => {
  await dropEncoderThread();
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe('the encoder thread started ahead', () => {
  it('is the one the first pool takes, and embeds as the encoder does', async () => {
    // Prepare
    startEncoderThread();
    const pool = new WorkerPoolEmbedder(1);
    pools.push(pool);
    const texts = ['retry failed requests with exponential backoff', 'stable keys for dynamic lists in React'];

    // Act
    const vectors = await pool.embed(texts);

    // Assess: the pool took it (none is left waiting), and the vectors are the encoder's.
    expect(takeEncoderThread()).toBeUndefined();
    const expected = await new UseLiteEmbedder().embed(texts);
    vectors.forEach((vector, i) => expect(Array.from(vector)).toEqual(Array.from(expected[i]!)));
  }, 120_000);

  it('stops when nobody takes it, and the next pool starts a thread of its own', async () => {
    // Prepare: a thread waits, then the server chooses to stop it (another provider answers).
    startEncoderThread();

    // Act
    await dropEncoderThread();
    const pool = new WorkerPoolEmbedder(1);
    pools.push(pool);

    // Assess: nothing is left to take, and the pool still embeds.
    expect(takeEncoderThread()).toBeUndefined();
    expect((await pool.embed(['check the thread works']))[0]).toHaveLength(512);
  }, 120_000);
});
