/**
 * Chooses the Embedder from configuration. `none` means no embedder at all:
 * search then runs on full-text ranking alone.
 */
import type { Embedder } from '../ports/embedder.ts';
import { BedrockEmbedder, type BedrockEmbedderOptions } from './bedrock-embedder.ts';
import { UseLiteEmbedder, type UseLiteEmbedderOptions } from './use-lite-embedder.ts';

export type EmbeddingProvider = 'use-lite' | 'bedrock' | 'none';

export const EMBEDDING_PROVIDERS: readonly EmbeddingProvider[] = ['use-lite', 'bedrock', 'none'];

export interface EmbedderFactoryOptions {
  useLite?: UseLiteEmbedderOptions;
  bedrock?: BedrockEmbedderOptions;
}

export function createEmbedder(provider: EmbeddingProvider, options: EmbedderFactoryOptions = {}): Embedder | undefined {
  switch (provider) {
    case 'use-lite':
      return new UseLiteEmbedder(options.useLite);
    case 'bedrock':
      return new BedrockEmbedder(options.bedrock);
    case 'none':
      return undefined;
    default: {
      const unknown: never = provider;
      throw new Error(`Unknown embedding provider "${String(unknown)}"; expected one of ${EMBEDDING_PROVIDERS.join(', ')}.`);
    }
  }
}

function isEmbeddingProvider(value: string): value is EmbeddingProvider {
  return (EMBEDDING_PROVIDERS as readonly string[]).includes(value);
}

/**
 * Reads `CHATCTX_EMBEDDINGS` (case-insensitive, surrounding spaces ignored).
 * Unset or blank gives `fallback`; anything else unknown throws.
 */
export function readEmbeddingProvider(env: NodeJS.ProcessEnv, fallback: EmbeddingProvider): EmbeddingProvider {
  const raw = env.CHATCTX_EMBEDDINGS;
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (isEmbeddingProvider(value)) return value;
  throw new Error(
    `CHATCTX_EMBEDDINGS must be one of ${EMBEDDING_PROVIDERS.join(', ')}; got ${JSON.stringify(raw)}.`,
  );
}
