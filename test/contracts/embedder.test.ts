/**
 * The `Embedder` contract against every adapter: the bundled sentence encoder in
 * process and on worker threads (the real model), and Bedrock Titan V2 mocked at
 * the SDK client with a deterministic stand-in for the model.
 */
import { createHash } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { BedrockRuntimeClient, InvokeModelCommand, type InvokeModelCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import { WorkerPoolEmbedder } from '../../lambdas/embeddings/worker-pool-embedder.ts';
import { BedrockEmbedder } from '../../lambdas/embeddings/bedrock-embedder.ts';
import { describeEmbedderContract } from './embedder.contract.ts';

describeEmbedderContract('USE-lite in process', async () => ({ embedder: new UseLiteEmbedder(), close: async () => {} }));

describeEmbedderContract('USE-lite on worker threads', async () => {
  const embedder = new WorkerPoolEmbedder(2);
  return { embedder, close: () => embedder.close() };
});

/** A normalized 512-d vector that depends only on the text, as a stand-in for Titan. */
function titanStandIn(text: string): number[] {
  const seed = createHash('sha256').update(text).digest();
  const raw = Array.from({ length: 512 }, (_, i) => seed[i % seed.length]! - 128 + (i % 7));
  const norm = Math.hypot(...raw);
  return raw.map((value) => value / norm);
}

describeEmbedderContract('Bedrock Titan V2 (mocked client)', async () => {
  const bedrock = mockClient(BedrockRuntimeClient);
  bedrock.on(InvokeModelCommand).callsFake(async (input: { body: string }): Promise<InvokeModelCommandOutput> => {
    const { inputText } = JSON.parse(input.body) as { inputText: string };
    const body = new TextEncoder().encode(JSON.stringify({ embedding: titanStandIn(inputText), inputTextTokenCount: 4 }));
    return { body: body as InvokeModelCommandOutput['body'], contentType: 'application/json', $metadata: {} };
  });
  const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }) });
  return { embedder, close: async () => bedrock.restore() };
});
