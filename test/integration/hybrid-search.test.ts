/**
 * The hybrid engine on the starter corpus with the real sentence encoder, and its
 * failure paths with Bedrock mocked at the SDK client: the service degrades to
 * keyword search with a reason, never an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { BedrockRuntimeClient, InvokeModelCommand, ThrottlingException } from '@aws-sdk/client-bedrock-runtime';
import { memoryStore, seededUseLite, type MemoryStore } from '../support/store.ts';
import { BedrockEmbedder } from '../../lambdas/embeddings/bedrock-embedder.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';

let store: MemoryStore;

beforeAll(async () => {
  store = await memoryStore({ embedder: await seededUseLite() });
});

afterAll(async () => {
  await store.sql.close();
});

const search = async (tools: MemoryStore['tools'], args: Record<string, unknown>) => (await tools.search_knowledge(args)).structuredContent as any;

describe('hybrid retrieval', () => {
  it('reports hybrid mode, the provider, and a cache miss then a hit for a repeated query', async () => {
    const query = 'what should I use as the key prop when mapping over an array';
    const first = await search(store.tools, { query });
    expect(first.retrieval).toMatchObject({ mode: 'hybrid', degraded: false, embedding_provider: 'use-lite', embedding_cache: 'miss' });
    expect(first.results[0].slug).toBe('use-stable-keys-for-dynamic-react-lists');
    const again = await search(store.tools, { query: `  What should I use as the KEY prop when mapping over an array ` });
    expect(again.retrieval.embedding_cache).toBe('hit');
    expect(again.results.map((r: any) => r.slug)).toEqual(first.results.map((r: any) => r.slug));
    // The cache holds a keyed hash, never the text.
    const rows = await store.sql.query<{ cache_key: string }>('SELECT cache_key FROM embedding_cache');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.cache_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('lets the dense side veto a word-level match it does not back', async () => {
    // Shares words ("load", "data", "query") with the EF Core record but asks something else.
    const query = 'lazy-load images below the fold';
    const keywordOnly = createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger });
    const lexical = await search(keywordOnly, { query });
    const hybrid = await search(store.tools, { query });
    expect(lexical.results.length).toBeGreaterThan(0);
    expect(hybrid.retrieval.mode).toBe('no_match');
  });

  it('matches technologies through aliases and versions through semver ranges', async () => {
    const query = 'accessible label ids for form fields in React components';
    const aliased = await search(store.tools, { query, technologies: ['reactjs'], versions: { 'react.js': '^18.2.0' } });
    expect(aliased.retrieval.technology_filter_fallback).toBe(false);
    expect(aliased.query_summary).toBe('React');
    const useId = aliased.results.find((r: any) => r.slug === 'generate-accessible-label-ids-with-react-useid');
    expect(useId.applicability_note).toBeUndefined();

    const old = await search(store.tools, { query, technologies: ['React.js'], versions: { react: '17.0.2' } });
    const excluded = old.results.find((r: any) => r.slug === 'generate-accessible-label-ids-with-react-useid');
    expect(excluded.applicability_note).toMatch(/covers React >=18, not the requested react 17\.0\.2/);
  });
});

describe('degraded retrieval', () => {
  const bedrock = mockClient(BedrockRuntimeClient);
  afterAll(() => bedrock.restore());

  const withBedrock = (timeoutMs: number) =>
    createToolHandlers({
      sql: store.sql,
      secrets: { pepper: async () => store.pepper },
      logger: store.logger,
      embedder: new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }), timeoutMs }),
    });

  it('falls back to keyword search with a reason when the provider is throttled', async () => {
    bedrock.on(InvokeModelCommand).rejects(new ThrottlingException({ message: 'Rate exceeded', $metadata: {} }));
    const out = await search(withBedrock(1000), { query: 'password hashing algorithm for user accounts' });
    expect(out.retrieval).toMatchObject({ mode: 'keyword_fallback', degraded: true, embedding_provider: 'bedrock' });
    expect(out.retrieval.degraded_reason).toMatch(/ThrottlingException/);
    expect(out.retrieval.degraded_reason).not.toMatch(/Rate exceeded/);
    expect(out.results[0].slug).toBe('hash-passwords-with-argon2id-or-bcrypt');
  });

  it('falls back to keyword search when the provider is too slow', async () => {
    bedrock.on(InvokeModelCommand).callsFake(() => new Promise(() => {}));
    const out = await search(withBedrock(50), { query: 'deep pagination with OFFSET is slow' });
    expect(out.retrieval.mode).toBe('keyword_fallback');
    expect(out.retrieval.degraded_reason).toMatch(/TimeoutError|timed out/);
    expect(out.results[0].slug).toBe('use-keyset-pagination-instead-of-large-offset');
  });
});
