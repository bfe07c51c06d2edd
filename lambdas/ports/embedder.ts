/**
 * The `Embedder` port: turns texts into unit vectors for candidate retrieval.
 * Embeddings only find candidates; they never write guidance text.
 */
export interface Embedder {
  /** Provider name reported in `retrieval.embedding_provider`. */
  readonly provider: string;
  /** Model identifier stored beside each record's embedding. */
  readonly model: string;
  readonly dimensions: number;
  /** Embeds non-empty texts. Rejects on failure; callers degrade to keyword search. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** What embedding `texts` would cost in USD, for providers that bill per use; absent for free ones. */
  estimateCostUsd?(texts: readonly string[]): number;
  /** Lets go of what the adapter holds (worker threads, say); absent when there is nothing to release. */
  close?(): Promise<void>;
}
