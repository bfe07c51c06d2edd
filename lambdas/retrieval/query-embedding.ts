/**
 * The query's embedding, through a cache keyed by HMAC(pepper, model, dimensions,
 * normalized query). A repeated question skips the encoder; the raw text is never
 * stored. Any failure (encoder error, timeout, cache trouble) yields no vector and
 * a reason, so the caller degrades to keyword search instead of failing.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import { hashEmbeddingCacheKey } from '../privacy/hashing.ts';
import { embedWithDeadline } from '../embeddings/embed-with-deadline.ts';
import { parseVector, vectorLiteral } from '../embeddings/vector-codec.ts';

export interface QueryEmbedding {
  readonly vector?: Float32Array;
  readonly cache?: 'hit' | 'miss';
  readonly degradedReason?: string;
}

export interface QueryEmbeddingDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  readonly embedder?: Embedder;
  /** Time allowed for the encoder on a cache miss. @default 1500 */
  readonly embedTimeoutMs?: number;
}

const NO_PROVIDER = 'No embedding provider is configured, so only full-text search ran; recall is lower.';

export async function embedQuery(deps: QueryEmbeddingDeps, query: string): Promise<QueryEmbedding> {
  const embedder = deps.embedder;
  if (!embedder) return { degradedReason: NO_PROVIDER };
  const key = hashEmbeddingCacheKey(await deps.secrets.pepper(), embedder.model, embedder.dimensions, query);
  try {
    const [cached] = await deps.sql.query<{ embedding: string }>(
      'UPDATE embedding_cache SET last_used_at = now() WHERE cache_key = $1 RETURNING embedding::text AS embedding',
      [key],
    );
    if (cached) return { vector: parseVector(cached.embedding), cache: 'hit' };
  } catch {
    // A cache that cannot be read is a miss; the encoder still answers.
  }
  const result = await embedWithDeadline(embedder, [query], deps.embedTimeoutMs ?? 1500);
  if (!result.ok) return { degradedReason: result.reason };
  const vector = result.vectors[0]!;
  try {
    await deps.sql.query(
      'INSERT INTO embedding_cache (cache_key, embedding) VALUES ($1, $2::vector) ON CONFLICT (cache_key) DO NOTHING',
      [key, vectorLiteral(vector)],
    );
  } catch {
    // Caching is an optimisation; the answer does not depend on it.
  }
  return { vector, cache: 'miss' };
}
