/**
 * Warms the local server before it says it is ready, so the first search after a
 * (re)start costs about what the ones after it do, instead of paying alone for the
 * encoder's model load, cold code paths, the search statement's plans and the first
 * reads of the BM25 tables, the passages and the records.
 *
 * - `warmEncoder` starts loading the bundled encoder at once, so the load overlaps
 *   opening the store, and runs it a few times. Only the bundled encoder: it costs
 *   nothing to call, while a Bedrock call would be billed (and a broken provider
 *   must not delay the start).
 * - `warmUp` then calls the `search_knowledge` tool on a few fixed questions and
 *   one new one (so the encoder's path through a search runs too), and
 *   `get_guidance` on what they found, minus what a call leaves behind: no search
 *   event, no log line, no kept answer (their answer cache is thrown away). The fixed
 *   questions' embeddings stay in the embedding cache, as any question's do; the
 *   new one's is deleted.
 *
 * A failure only means a slower first search; it never stops the server. One
 * `warm_up` log line says how long it took.
 */
import type { Embedder } from '../ports/embedder.ts';
import type { Logger } from '../ports/logger.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Sql } from '../ports/sql.ts';
import type { SearchEventSink } from '../retrieval/search-events.ts';
import { SearchCache } from '../retrieval/search-cache.ts';
import { searchKnowledgeTool } from '../tools/search-knowledge-tool.ts';
import { getGuidanceTool } from '../tools/get-guidance-tool.ts';
import { errorKind, silentLogger } from '../observability/logger.ts';
import { hashEmbeddingCacheKey } from '../privacy/hashing.ts';

/** Questions in the words records use, of different lengths, so the keyword side reads real index entries. */
const WARM_UP_QUESTIONS = [
  'retry failed requests with timeouts and exponential backoff',
  'validate untrusted input at the boundary and log errors without secrets',
  'how should a service cache results, paginate queries and bound memory use under load',
];

/** Search events from the warm-up go nowhere: analytics count only real searches. */
const NO_EVENTS: SearchEventSink = { record: async () => undefined };

/** How the encoder's warm-up went: `none` when there is no bundled encoder to warm. */
export type EncoderWarmUp = 'ready' | 'failed' | 'slow' | 'none';

const isBundled = (embedder: Embedder | undefined): embedder is Embedder => embedder?.provider === 'use-lite';

/**
 * Settles (never rejects) when the bundled encoder has embedded each warm-up
 * question once, or after `maxWaitMs` if it has not by then; at once for any other
 * provider.
 */
export function warmEncoder(embedder: Embedder | undefined, maxWaitMs = 20_000): Promise<EncoderWarmUp> {
  if (!isBundled(embedder)) return Promise.resolve('none');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<EncoderWarmUp>((resolve) => (timer = setTimeout(() => resolve('slow'), maxWaitMs).unref()));
  const warmed = (async (): Promise<EncoderWarmUp> => {
    let failures = 0;
    // A crashed worker is replaced on the next call, so one failure is not the end of it.
    for (const question of WARM_UP_QUESTIONS) await embedder.embed([`${question}?`]).catch(() => (failures += 1));
    return failures < WARM_UP_QUESTIONS.length ? 'ready' : 'failed';
  })();
  return Promise.race([warmed, late]).finally(() => clearTimeout(timer));
}

/**
 * Calls the tools on the warm-up questions, then waits for the encoder's warm-up and
 * searches once more with a new question; never throws.
 *
 * The fixed questions do not wait for the encoder: on a restart their embeddings are
 * in the embedding cache, so those searches (the store's first reads and plans, the
 * larger part of the warm-up) run while the encoder is still loading. Where one is not
 * cached (a first start), its search waits for the encoder's warm-up as before, and
 * searches on keywords alone if the encoder did not become ready.
 */
export async function warmUp(store: { sql: Sql; secrets: Secrets }, embedder: Embedder | undefined, encoder: Promise<EncoderWarmUp>, logger: Logger): Promise<void> {
  const started = performance.now();
  const bundled = isBundled(embedder) ? embedder : undefined;
  const deps = { sql: store.sql, secrets: store.secrets, logger: silentLogger, events: NO_EVENTS, cache: new SearchCache(), embedTimeoutMs: 10_000 };
  const ask = async (query: string, withEmbedder: Embedder | undefined) => {
    const tools = { embedder: withEmbedder, ...deps };
    const found = (await searchKnowledgeTool(tools)({ query })).structuredContent as { results?: { slug: string }[] } | undefined;
    const ids = (found?.results ?? []).slice(0, 3).map((r) => r.slug);
    if (ids.length > 0) await getGuidanceTool(tools)({ ids });
  };
  let status: EncoderWarmUp | undefined;
  let encoderMs = 0;
  try {
    for (const query of WARM_UP_QUESTIONS) await ask(query, bundled && afterWarmUp(bundled, encoder));
    const waitStarted = performance.now();
    status = await encoder;
    encoderMs = Math.round(performance.now() - waitStarted);
    if (bundled && status === 'ready') {
      const fresh = `${WARM_UP_QUESTIONS[0]} ${Date.now().toString(36)}`;
      await ask(fresh, bundled);
      const key = hashEmbeddingCacheKey(await store.secrets.pepper(), bundled.model, bundled.dimensions, fresh);
      await store.sql.query('DELETE FROM embedding_cache WHERE cache_key = $1', [key]);
    }
  } catch (error) {
    logger.warn('warm_up_failed', { error: errorKind(error) });
  }
  status ??= await encoder;
  logger.info('warm_up', { encoder: status, encoder_wait_ms: encoderMs, searches_ms: Math.round(performance.now() - started) - encoderMs });
}

/** `embedder`, but a call waits for the encoder's warm-up and fails unless it became ready: a cache hit never calls it. */
function afterWarmUp(embedder: Embedder, encoder: Promise<EncoderWarmUp>): Embedder {
  return {
    provider: embedder.provider,
    model: embedder.model,
    dimensions: embedder.dimensions,
    embed: async (texts, signal) => {
      if ((await encoder) !== 'ready') throw new Error('The encoder is not ready.');
      return embedder.embed(texts, signal);
    },
  };
}
