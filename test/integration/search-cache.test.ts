/**
 * What a search process keeps between calls, over the real embedded Postgres and
 * the real encoder: answers to repeated questions and records read, per corpus
 * generation; search events written one by one or in batches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, seededUseLite, type MemoryStore } from '../support/store.ts';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { SearchCache } from '../../lambdas/retrieval/search-cache.ts';
import { BufferedSearchEvents } from '../../lambdas/retrieval/search-events.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { deprecateRecords } from '../../lambdas/records/record-review.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { recordFileSchema, type RecordFile } from '../../lambdas/records/record-schema.ts';

let store: MemoryStore;
const encoder = new UseLiteEmbedder();

/** The real encoder, counting how many texts it was asked to embed. */
function counting(inner: Embedder = encoder) {
  const counted = { texts: 0, fail: false };
  const embedder: Embedder = {
    provider: inner.provider,
    model: inner.model,
    dimensions: inner.dimensions,
    embed: async (texts, signal) => {
      if (counted.fail) throw new Error('encoder down');
      counted.texts += texts.length;
      return inner.embed(texts, signal);
    },
  };
  return { embedder, counted };
}

function cachedTools(embedder: Embedder) {
  return createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, embedder, logger: store.logger, cache: new SearchCache() });
}

const search = async (tools: MemoryStore['tools'], args: Record<string, unknown>) => {
  const result = await tools.search_knowledge(args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as any;
};

const countEvents = async () => (await store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM search_events'))[0]!.n;
const generation = async () => Number((await store.sql.query<{ generation: number }>('SELECT generation FROM corpus_stats WHERE id = 1'))[0]!.generation);

beforeAll(async () => {
  // The corpus from its shipped embeddings (the vectors this encoder makes), as the server loads it; queries run the encoder.
  store = await memoryStore({ embedder: await seededUseLite() });
});

afterAll(async () => {
  await store.sql.close();
});

describe('answers kept per corpus generation', () => {
  it('answers a repeated question from memory: same answer, no encoder run, still one analytics row per search', async () => {
    const { embedder, counted } = counting();
    const tools = cachedTools(embedder);
    const query = 'how long should a login session cookie live';
    const eventsBefore = await countEvents();
    const first = await search(tools, { query });
    const again = await search(tools, { query });
    expect(counted.texts).toBe(1);
    expect(first.retrieval.embedding_cache).toBe('miss');
    expect(again.retrieval.embedding_cache).toBe('hit');
    expect(again.results).toEqual(first.results);
    expect(store.logs.filter((l) => l.includes('"answer_cache":"hit"'))).toHaveLength(1);
    expect((await countEvents()) - eventsBefore).toBe(2);
  });

  it('embeds a question again when its cached embedding was pruned, instead of answering by keyword', async () => {
    const { embedder, counted } = counting();
    const tools = createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, embedder, logger: store.logger });
    const query = 'rotate signing keys without logging every user out';
    const first = await search(tools, { query });
    await store.sql.query('DELETE FROM embedding_cache');
    const again = await search(tools, { query });
    expect(counted.texts).toBe(2);
    expect(again.retrieval).toMatchObject({ mode: first.retrieval.mode, degraded: false, embedding_cache: 'miss' });
    expect(again.results.map((r: any) => r.slug)).toEqual(first.results.map((r: any) => r.slug));
  });

  it('gives a different argument its own answer', async () => {
    const tools = cachedTools(counting().embedder);
    const query = 'password hashing algorithm for user accounts';
    const brief = await search(tools, { query });
    const standard = await search(tools, { query, detail: 'standard' });
    expect(brief.results[0]).not.toHaveProperty('rationale');
    expect(standard.results[0]).toHaveProperty('rationale');
  });

  it('moves the generation on with every change a search can see, and not with a change rolled back', async () => {
    const start = await generation();
    await importRecords(store.sql, [candidate('generation-probe-record', 'Probe the corpus generation counter')], { approve: false });
    const afterImport = await generation();
    expect(afterImport).toBeGreaterThan(start);
    // A change that is rolled back leaves it where it was: it moves with the change, not beside it.
    const rolledBack = store.sql.transaction(async (tx) => {
      await tx.query("UPDATE records SET title = 'Probe the corpus generation counter again' WHERE slug = 'generation-probe-record'");
      throw new Error('undo');
    });
    await expect(rolledBack).rejects.toThrow('undo');
    expect(await generation()).toBe(afterImport);
    await store.sql.query("UPDATE records SET title = 'Probe the corpus generation counter again' WHERE slug = 'generation-probe-record'");
    expect(await generation()).toBeGreaterThan(afterImport);
  });

  it('sees a record approved after the question was first answered, and stops showing one taken back', async () => {
    const tools = cachedTools(counting().embedder);
    const query = 'quarantine flaky integration tests in the nightly pipeline';
    const before = await search(tools, { query });
    expect(before.results.map((r: any) => r.slug)).not.toContain('quarantine-flaky-integration-tests');

    await importRecords(store.sql, [candidate('quarantine-flaky-integration-tests', 'Quarantine flaky integration tests in the nightly pipeline')], { approve: true });
    const after = await search(tools, { query });
    expect(after.results[0]?.slug).toBe('quarantine-flaky-integration-tests');

    await deprecateRecords(store.sql, ['quarantine-flaky-integration-tests'], { reason: 'withdrawn in a test' });
    const withdrawn = await search(tools, { query });
    expect(withdrawn.results.map((r: any) => r.slug)).not.toContain('quarantine-flaky-integration-tests');
  });

  it('does not keep a degraded answer: once the encoder is back, the same question gets hybrid retrieval', async () => {
    const { embedder, counted } = counting();
    const tools = cachedTools(embedder);
    const query = 'constant time comparison of secret tokens';
    counted.fail = true;
    const degraded = await search(tools, { query });
    expect(degraded.retrieval).toMatchObject({ degraded: true });
    counted.fail = false;
    const recovered = await search(tools, { query });
    expect(recovered.retrieval).toMatchObject({ degraded: false, embedding_cache: 'miss' });
  });
});

describe('search events', () => {
  it('writes buffered events together on close, hashed, one per search', async () => {
    const before = await countEvents();
    const events = new BufferedSearchEvents(store.sql, store.logger, { flushMs: 60_000 });
    const tools = createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger, events });
    const query = 'deep pagination with OFFSET is slow';
    for (let i = 0; i < 3; i++) await search(tools, { query, technologies: ['PostgreSQL'], topic: 'performance' });
    expect(await countEvents()).toBe(before);
    await events.close();
    const rows = await store.sql.query<{ query_hash: string; technologies: string[]; topics: string[]; mode: string }>(
      'SELECT query_hash, technologies, topics, mode FROM search_events ORDER BY id DESC LIMIT 3',
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ technologies: ['PostgreSQL'], topics: ['performance'], mode: 'keyword_fallback' });
      expect(row.query_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain('OFFSET');
    }
  });

  it('counts the events a failed batch lost, and the searches still answered', async () => {
    const own = await memoryStore();
    try {
      const events = new BufferedSearchEvents(own.sql, own.logger, { flushMs: 60_000 });
      const tools = createToolHandlers({ sql: own.sql, secrets: { pepper: async () => own.pepper }, logger: own.logger, events });
      await own.sql.query('DROP TABLE search_events');
      await search(tools, { query: 'password hashing algorithm for user accounts' });
      await search(tools, { query: 'password hashing algorithm for user accounts' });
      await events.close();
      expect(own.logs.join('\n')).toMatch(/"event":"search_event_failed".*"events":2/);
    } finally {
      await own.sql.close();
    }
  });
});

function candidate(slug: string, title: string): RecordFile {
  return recordFileSchema.parse({
    slug,
    title,
    topic: 'testing',
    summary: `${title}: a test fixture record.`,
    recommendation: `${title}; rerun them apart and fix or delete them within a week.`,
    confidence: 'medium',
    sources: [{ title: 'Fixture', url: 'https://example.com/fixture' }],
  });
}
