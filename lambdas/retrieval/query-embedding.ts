/**
 * The query's embedding, through a cache keyed by HMAC(pepper, model, dimensions,
 * normalized query). A repeated question skips the encoder; the raw text is never
 * stored. Any failure (encoder error, timeout, cache trouble) yields no vector and
 * a reason, so the caller degrades to keyword search instead of failing.
 *
 * A cached embedding is handed on by its key (see candidate-search.ts): the search
 * statement reads it where it is, so it never travels as text; a new one goes with
 * its key, and the search statement stores it.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import { hashEmbeddingCacheKey } from '../privacy/hashing.ts';
import { embedWithDeadline } from '../embeddings/embed-with-deadline.ts';
import { vectorLiteral } from '../embeddings/vector-codec.ts';
import type { QueryVector } from './candidate-search.ts';

export interface QueryEmbedding {
  readonly vector?: QueryVector;
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

const NO_PROVIDER = 'No embedding provider is configured; keyword search only.';

/**
 * The embedding a search asks for first: by its cache key alone, with no lookup of
 * its own. The retrieval statement reads it from the cache, or reports it missing,
 * and then `embedNewQuery` runs the encoder (see search-service.ts).
 */
export async function cachedQueryEmbedding(deps: QueryEmbeddingDeps, query: string): Promise<QueryEmbedding> {
  const embedder = deps.embedder;
  if (!embedder) return { degradedReason: NO_PROVIDER };
  return { vector: { cacheKey: await cacheKeyOf(deps, embedder, query) }, cache: 'hit' };
}

/** Runs the encoder on the query; the retrieval statement stores the vector under its key (given when already known). */
export async function embedNewQuery(deps: QueryEmbeddingDeps, query: string, cacheKey?: string): Promise<QueryEmbedding> {
  const embedder = deps.embedder;
  if (!embedder) return { degradedReason: NO_PROVIDER };
  const key = cacheKey ?? (await cacheKeyOf(deps, embedder, query));
  const result = await embedWithDeadline(embedder, [query], deps.embedTimeoutMs ?? 1500);
  if (!result.ok) return { degradedReason: result.reason };
  // Stored in the cache by the search statement, which parses it anyway (candidate-search.ts).
  return { vector: { cacheKey: key, literal: vectorLiteral(result.vectors[0]!) }, cache: 'miss' };
}

/**
 * Both steps for a caller that must know up front whether the embedding is cached
 * (the evaluation harness times them): a cache lookup, then the encoder on a miss.
 */
export async function embedQuery(deps: QueryEmbeddingDeps, query: string): Promise<QueryEmbedding> {
  const embedder = deps.embedder;
  if (!embedder) return { degradedReason: NO_PROVIDER };
  const key = await cacheKeyOf(deps, embedder, query);
  try {
    const [cached] = await deps.sql.query<{ found: number }>('SELECT count(*)::int AS found FROM embedding_cache WHERE cache_key = $1', [key]);
    if (cached && cached.found > 0) return { vector: { cacheKey: key }, cache: 'hit' };
  } catch {
    // A cache that cannot be read is a miss; the encoder still answers.
  }
  return embedNewQuery(deps, query, key);
}

async function cacheKeyOf(deps: QueryEmbeddingDeps, embedder: Embedder, query: string): Promise<string> {
  return hashEmbeddingCacheKey(await deps.secrets.pepper(), embedder.model, embedder.dimensions, query);
}
