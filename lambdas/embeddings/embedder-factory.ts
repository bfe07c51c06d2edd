/**
 * Builds the configured Embedder. `none` means no embedder at all: search then runs
 * on full-text ranking alone. The bundled encoder runs on worker threads, never on
 * the caller's event loop, behind the starter corpus's shipped embeddings. Each adapter module is imported only when chosen, so a
 * local server never loads the Bedrock client and a Lambda never loads the encoder.
 */
import type { Embedder } from '../ports/embedder.ts';
import type { EmbeddingProvider } from '../config/settings.ts';

export interface EmbedderChoice {
  readonly provider: EmbeddingProvider;
  /** Bedrock model id, for `bedrock`. */
  readonly bedrockModelId?: string;
  /** Worker threads for `use-lite`. @default all cores but one */
  readonly threads?: number;
}

export async function createEmbedder(choice: EmbedderChoice): Promise<Embedder | undefined> {
  switch (choice.provider) {
    case 'use-lite': {
      const [{ WorkerPoolEmbedder }, { SeededEmbedder, loadSeed }] = await Promise.all([import('./worker-pool-embedder.ts'), import('./embedding-seed.ts')]);
      const pool = new WorkerPoolEmbedder(choice.threads);
      // The starter corpus's passages come embedded (embedding-seed.ts); everything else goes to the encoder.
      return new SeededEmbedder(pool, await loadSeed(pool.model, pool.dimensions));
    }
    case 'bedrock': {
      const { BedrockEmbedder } = await import('./bedrock-embedder.ts');
      return new BedrockEmbedder({ modelId: choice.bedrockModelId });
    }
    case 'none':
      return undefined;
  }
}
