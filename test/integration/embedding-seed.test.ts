/**
 * The starter corpus ships its passages' USE-lite embeddings: the seed must hold
 * every passage the records have now (else a first start spends a minute embedding
 * them: run `npm run embeddings:seed`), hold what the encoder computes for them, and
 * only ever answer the texts it holds.
 */
import { describe, expect, it } from 'vitest';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { embedRecords, passagesOf, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import { SeededEmbedder, loadSeed } from '../../lambdas/embeddings/embedding-seed.ts';
import { vectorKey } from '../../lambdas/embeddings/vector-file.ts';
import { memoryStore, seededUseLite, type MemoryStore } from '../support/store.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';

const encoder = new UseLiteEmbedder();
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describe('the starter corpus embedding seed', () => {
  it('holds every passage of every starter record, and what the encoder computes for them', async () => {
    const records = await readRecordFiles(STARTER_CORPUS_DIR);
    const passages = records.flatMap((r) => passagesOf({ title: r.title, summary: r.summary ?? null, recommendation: r.recommendation, askedAs: r.asked_as ?? [] }));
    const seed = await loadSeed(encoder.model, encoder.dimensions);
    const missing = passages.filter((p) => !seed.has(vectorKey(encoder.model, encoder.dimensions, p)));
    expect(missing, 'run `npm run embeddings:seed`').toEqual([]);
    // A sample across the corpus, windows and asked_as phrasings alike.
    const sample = passages.filter((_, i) => i % 97 === 0);
    const computed = await encoder.embed(sample);
    sample.forEach((text, i) => expect(cosine(computed[i]!, seed.get(vectorKey(encoder.model, encoder.dimensions, text))!)).toBeGreaterThan(0.9999));
  }, 300_000);

  it('answers the texts it holds and sends every other one to the encoder', async () => {
    const seed = await loadSeed(encoder.model, encoder.dimensions);
    const calls: string[][] = [];
    const seeded = new SeededEmbedder({ ...encoder, provider: encoder.provider, model: encoder.model, dimensions: encoder.dimensions, embed: async (texts) => (calls.push([...texts]), encoder.embed(texts)) }, seed);
    const [record] = await readRecordFiles(STARTER_CORPUS_DIR);
    const known = passagesOf({ title: record!.title, summary: record!.summary ?? null, recommendation: record!.recommendation, askedAs: record!.asked_as ?? [] });
    const out = await seeded.embed([known[0]!, 'a question no record has ever been asked', known[1]!]);
    expect(calls).toEqual([['a question no record has ever been asked']]);
    expect(out).toHaveLength(3);
    expect(cosine(out[1]!, (await encoder.embed(['a question no record has ever been asked']))[0]!)).toBeGreaterThan(0.9999);
    expect({ seeded: seeded.seeded, computed: seeded.computed }).toEqual({ seeded: 2, computed: 1 });
  });
});

describe('a first embedding pass', () => {
  const hasIndex = async (store: MemoryStore) =>
    (await store.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'record_passages_embedding_idx'"))[0]!.n === 1;

  it('builds the vector index once at the end, and a pass cut short leaves the next one to build it', async () => {
    const embedder = await seededUseLite();
    const store = await memoryStore();
    try {
      const tools = createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, embedder, logger: store.logger });
      const firstSlug = async () =>
        ((await tools.search_knowledge({ query: 'argon2id or bcrypt for storing user passwords' })).structuredContent as { results: { slug: string }[] })
          .results[0]?.slug;
      const all = await recordsToEmbed(store.sql, embedder.model);
      const stop = new AbortController();
      const cut = embedRecords(store.sql, embedder, all, { deferIndex: true, signal: stop.signal, onProgress: ({ done }) => done >= 32 && stop.abort() });
      await expect(cut).rejects.toThrow();
      // Cut short with no index: what was embedded stays, and searches still answer (by an exact scan).
      expect(await hasIndex(store)).toBe(false);
      expect(await recordsToEmbed(store.sql, embedder.model)).toHaveLength(all.length - 32);
      expect(await firstSlug()).toBe('hash-passwords-with-argon2id-or-bcrypt');

      const rest = await embedRecords(store.sql, embedder, await recordsToEmbed(store.sql, embedder.model), { deferIndex: true });
      expect(rest.embedded).toBe(all.length - 32);
      expect(await hasIndex(store)).toBe(true);
      expect(await firstSlug()).toBe('hash-passwords-with-argon2id-or-bcrypt');
    } finally {
      await store.sql.close();
    }
  }, 300_000);
});
