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

/** Waits for the encoder's warm-up, then calls the tools on the warm-up questions; never throws. */
export async function warmUp(store: { sql: Sql; secrets: Secrets }, embedder: Embedder | undefined, encoder: Promise<EncoderWarmUp>, logger: Logger): Promise<void> {
  const started = performance.now();
  const status = await encoder;
  const encoderMs = Math.round(performance.now() - started);
  const bundled = isBundled(embedder) && status === 'ready' ? embedder : undefined;
  const deps = { sql: store.sql, secrets: store.secrets, embedder: bundled, logger: silentLogger, events: NO_EVENTS, cache: new SearchCache(), embedTimeoutMs: 10_000 };
  const search = searchKnowledgeTool(deps);
  const guidance = getGuidanceTool(deps);
  const fresh = `${WARM_UP_QUESTIONS[0]} ${Date.now().toString(36)}`;
  try {
    for (const query of bundled ? [...WARM_UP_QUESTIONS, fresh] : WARM_UP_QUESTIONS) {
      const found = (await search({ query })).structuredContent as { results?: { slug: string }[] } | undefined;
      const ids = (found?.results ?? []).slice(0, 3).map((r) => r.slug);
      if (ids.length > 0) await guidance({ ids });
    }
    if (bundled) {
      const key = hashEmbeddingCacheKey(await store.secrets.pepper(), bundled.model, bundled.dimensions, fresh);
      await store.sql.query('DELETE FROM embedding_cache WHERE cache_key = $1', [key]);
    }
  } catch (error) {
    logger.warn('warm_up_failed', { error: errorKind(error) });
  }
  logger.info('warm_up', { encoder: status, encoder_wait_ms: encoderMs, searches_ms: Math.round(performance.now() - started) - encoderMs });
}
