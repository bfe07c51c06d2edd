/**
 * BedrockEmbedder against a mocked Bedrock runtime: request shape, response
 * decoding, throttling, per-call deadline, input validation, bounded
 * concurrency, and the cost estimate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  BedrockRuntimeClient,
  InvokeModelCommand,
  ThrottlingException,
  type InvokeModelCommandOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { BedrockEmbedder, estimateBedrockCost, isThrottling } from '../../lambdas/embeddings/bedrock-embedder.ts';

const bedrock = mockClient(BedrockRuntimeClient);

afterEach(() => {
  bedrock.reset();
});

/** A unit-ish 512-d vector whose first component identifies it. */
function vector(marker: number): number[] {
  return Array.from({ length: 512 }, (_, i) => (i === 0 ? marker : 0.001 * (i % 7)));
}

function response(embedding: number[]): InvokeModelCommandOutput {
  const body = new TextEncoder().encode(JSON.stringify({ embedding, inputTextTokenCount: 5 }));
  return { body: body as InvokeModelCommandOutput['body'], contentType: 'application/json', $metadata: {} };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('BedrockEmbedder', () => {
  it('asks Titan V2 for normalized 512-d vectors and returns them as Float32Arrays', async () => {
    // Prepare
    bedrock.on(InvokeModelCommand).resolves(response(vector(0.25)));
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });

    // Act
    const [embedding] = await embedder.embed(['stable keys for React lists']);

    // Assess
    const calls = bedrock.commandCalls(InvokeModelCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input.modelId).toBe('amazon.titan-embed-text-v2:0');
    expect(JSON.parse(String(input.body))).toEqual({ inputText: 'stable keys for React lists', dimensions: 512, normalize: true });
    expect(embedding).toBeInstanceOf(Float32Array);
    expect(embedding).toHaveLength(512);
    expect(embedding![0]).toBeCloseTo(0.25, 6);
    expect(embedding![3]).toBeCloseTo(0.003, 6);
    expect(embedder).toMatchObject({ provider: 'bedrock', model: 'amazon.titan-embed-text-v2:0', dimensions: 512 });
  });

  it('returns vectors in input order even when calls finish out of order', async () => {
    // Prepare
    bedrock.on(InvokeModelCommand).callsFake(async (input: { body: string }) => {
      const text = JSON.parse(input.body).inputText as string;
      const marker = Number(text.split(' ')[1]);
      await sleep(marker === 0 ? 30 : 1);
      return response(vector(marker));
    });
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });

    // Act
    const vectors = await embedder.embed(['text 0', 'text 1', 'text 2']);

    // Assess
    expect(vectors.map((v) => v[0])).toEqual([0, 1, 2]);
  });

  it('rejects on throttling without retrying, and isThrottling recognises the error', async () => {
    // Prepare
    bedrock.on(InvokeModelCommand).rejects(new ThrottlingException({ message: 'Too many requests', $metadata: { httpStatusCode: 429 } }));
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });

    // Act
    const error = await embedder.embed(['query']).then(
      () => undefined,
      (e: unknown) => e,
    );

    // Assess
    expect(error).toMatchObject({ name: 'ThrottlingException' });
    expect(isThrottling(error)).toBe(true);
    expect(isThrottling(new Error('socket hang up'))).toBe(false);
    expect(bedrock.commandCalls(InvokeModelCommand)).toHaveLength(1);
  });

  it('rejects with a timeout when Bedrock answers after the per-call deadline', async () => {
    // Prepare
    bedrock.on(InvokeModelCommand).callsFake(async () => {
      await sleep(500);
      return response(vector(1));
    });
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }), timeoutMs: 50 });
    const started = Date.now();

    // Act
    const outcome = embedder.embed(['slow query']);

    // Assess
    await expect(outcome).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(400);
  });

  it("rejects with the caller's abort reason", async () => {
    // Prepare
    bedrock.on(InvokeModelCommand).callsFake(async () => {
      await sleep(200);
      return response(vector(1));
    });
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });
    const controller = new AbortController();
    const reason = new Error('request cancelled');

    // Act
    const outcome = embedder.embed(['query'], controller.signal);
    controller.abort(reason);

    // Assess
    await expect(outcome).rejects.toBe(reason);
  });

  it.each([[''], ['   \n\t']])('rejects an empty or whitespace-only text (%j) without calling Bedrock', async (blank) => {
    // Prepare
    bedrock.on(InvokeModelCommand).resolves(response(vector(1)));
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });

    // Act
    const outcome = embedder.embed(['a real query', blank]);

    // Assess
    await expect(outcome).rejects.toThrow(/empty or whitespace-only text \(index 1\)/);
    expect(bedrock.calls()).toHaveLength(0);
  });

  it('never has more than maxConcurrency calls in flight', async () => {
    // Prepare
    let inFlight = 0;
    let peak = 0;
    bedrock.on(InvokeModelCommand).callsFake(async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await sleep(10);
      inFlight -= 1;
      return response(vector(1));
    });
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }), maxConcurrency: 3 });
    const texts = Array.from({ length: 10 }, (_, i) => `passage ${i}`);

    // Act
    const vectors = await embedder.embed(texts);

    // Assess
    expect(vectors).toHaveLength(10);
    expect(bedrock.commandCalls(InvokeModelCommand)).toHaveLength(10);
    expect(peak).toBe(3);
  });

  it('rejects a response that is not a 512-d embedding', async () => {
    // Prepare
    bedrock.on(InvokeModelCommand).resolves(response([0.1, 0.2, 0.3]));
    const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });

    // Act
    const outcome = embedder.embed(['query']);

    // Assess
    await expect(outcome).rejects.toThrow(/512-dimensional/);
  });
});

describe('estimateBedrockCost', () => {
  it('counts about four characters per token, rounded up per text', () => {
    // Prepare
    const texts = ['abcd', 'abcde', 'x'.repeat(1_000_000)];

    // Act
    const estimate = estimateBedrockCost(texts);

    // Assess
    expect(estimate.tokens).toBe(1 + 2 + 250_000);
    expect(estimate.usd).toBeCloseTo((250_003 / 1000) * 0.00002, 12);
  });

  it('costs nothing for no texts', () => {
    expect(estimateBedrockCost([])).toEqual({ tokens: 0, usd: 0 });
  });
});
