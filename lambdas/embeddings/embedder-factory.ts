/**
 * Builds the configured Embedder. `none` means no embedder at all: search then runs
 * on full-text ranking alone. Each adapter module is imported only when chosen, so
 * a local server never loads the Bedrock client and a Lambda never loads the
 * sentence encoder.
 */
import type { Embedder } from '../ports/embedder.ts';
import type { EmbeddingProvider } from '../config/settings.ts';

export interface EmbedderChoice {
  readonly provider: EmbeddingProvider;
  /** Bedrock model id, for `bedrock`. */
  readonly bedrockModelId?: string;
}

export async function createEmbedder(choice: EmbedderChoice): Promise<Embedder | undefined> {
  switch (choice.provider) {
    case 'use-lite': {
      const { UseLiteEmbedder } = await import('./use-lite-embedder.ts');
      return new UseLiteEmbedder();
    }
    case 'bedrock': {
      const { BedrockEmbedder } = await import('./bedrock-embedder.ts');
      return new BedrockEmbedder({ modelId: choice.bedrockModelId });
    }
    case 'none':
      return undefined;
  }
}
