/**
 * The configured embedder: `none` gives search without one (full-text ranking
 * alone), and `bedrock` sends texts to Bedrock under the configured model. The
 * bundled encoder (`use-lite`) is started by every local server in the e2e tests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { BedrockRuntimeClient, InvokeModelCommand, type InvokeModelCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { createEmbedder } from '../../lambdas/embeddings/embedder-factory.ts';

const bedrock = mockClient(BedrockRuntimeClient);

afterEach(() => {
  bedrock.reset();
});

describe('createEmbedder', () => {
  it('gives no embedder for none', async () => {
    expect(await createEmbedder({ provider: 'none' })).toBeUndefined();
  });

  it('sends texts to Bedrock under the configured model for bedrock', async () => {
    const embedding = Array.from({ length: 512 }, (_, i) => (i === 0 ? 1 : 0));
    const body = new TextEncoder().encode(JSON.stringify({ embedding, inputTextTokenCount: 2 }));
    bedrock.on(InvokeModelCommand).resolves({ body: body as InvokeModelCommandOutput['body'], contentType: 'application/json', $metadata: {} });
    const embedder = await createEmbedder({ provider: 'bedrock', bedrockModelId: 'amazon.titan-embed-text-v2:0-test' });
    expect(embedder!.model).toBe('amazon.titan-embed-text-v2:0-test');
    const [vector] = await embedder!.embed(['pool hangs under load']);
    expect(vector).toHaveLength(512);
    expect(bedrock.commandCalls(InvokeModelCommand).map((call) => call.args[0].input.modelId)).toEqual(['amazon.titan-embed-text-v2:0-test']);
  });
});
