/**
 * search_knowledge with a reranker, over the real embedded store and the starter
 * corpus. The reranker is a plain object behind the `Reranker` port (the Bedrock
 * adapter has its own tests at the SDK boundary, test/unit/bedrock-reranker.test.ts):
 * its order wins; a failure, a throw or a missed deadline gives the usual answer,
 * marked degraded and not kept in the answer cache; the lexical guard keeps a
 * `no_match` a `no_match` whatever the reranker says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, seededUseLite, type MemoryStore } from '../support/store.ts';
import { searchKnowledgeTool } from '../../lambdas/tools/search-knowledge-tool.ts';
import { SearchCache } from '../../lambdas/retrieval/search-cache.ts';
import type { SearchDeps } from '../../lambdas/retrieval/search-service.ts';
import type { RerankOutcome, Reranker } from '../../lambdas/ports/reranker.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';

let store: MemoryStore;
let encoder: Embedder;

beforeAll(async () => {
  // Hybrid search as the local server runs it, so that an answer without a reranker is not degraded already.
  encoder = await seededUseLite();
  store = await memoryStore({ embedder: encoder });
});

afterAll(async () => {
  await store.sql.close();
});

/** A reranker that answers with `score(documents)` and keeps what it was sent. */
function fakeReranker(score: (documents: readonly string[]) => Promise<RerankOutcome> | RerankOutcome) {
  const sent: string[][] = [];
  const reranker: Reranker = {
    provider: 'fake',
    model: 'fake-rerank-v1',
    rerank: async (_query, documents) => {
      sent.push([...documents]);
      return score(documents);
    },
  };
  return { reranker, sent };
}

/** Scores that reverse the order the documents came in, steeply enough that no request boost undoes it. */
const reversing = (documents: readonly string[]): RerankOutcome => ({ ok: true, scores: documents.map((_, i) => 0.9 * 0.8 ** (documents.length - 1 - i)) });

async function search(args: Record<string, unknown>, deps: Partial<SearchDeps> = {}) {
  const tool = searchKnowledgeTool({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger, embedder: encoder, ...deps });
  const result = await tool(args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as any;
}

const slugs = (out: any): string[] => out.results.map((r: any) => r.slug);

describe('search_knowledge with a reranker', () => {
  const query = 'react state effect';

  it('orders the answer by the reranker: reversing its candidates reverses the results', async () => {
    // Prepare
    const { reranker, sent } = fakeReranker(reversing);
    const usual = await search({ query, max_results: 10 });

    // Act
    const reranked = await search({ query, max_results: 10 }, { reranker });

    // Assess
    expect(sent).toHaveLength(1);
    const documents = sent[0]!;
    expect(documents.length).toBeGreaterThanOrEqual(2);
    // Each result is the record of the document at the same place from the end.
    expect(reranked.results.length).toBe(documents.length);
    reranked.results.forEach((result: any, i: number) => expect(documents[documents.length - 1 - i]!.startsWith(result.title)).toBe(true));
    expect(slugs(usual)[0]).toBe('derive-values-during-render-instead-of-syncing-react-state');
    expect(slugs(reranked)[0]).not.toBe(slugs(usual)[0]);
    expect(reranked.retrieval).toEqual({ ...usual.retrieval, embedding_cache: 'hit' });
  });

  it('lets the reranker admit near misses of the relevance profile, in its own order', async () => {
    // Three timeout records the profile finds close to, but under, its threshold.
    const { reranker, sent } = fakeReranker(reversing);
    const question = { query: 'timeouts for outbound http calls', max_results: 10 };
    expect((await search(question)).retrieval.mode).toBe('no_match');
    const reranked = await search(question, { reranker });
    const documents = sent[0]!;
    expect(documents).toHaveLength(3);
    expect(reranked.retrieval.mode).toBe('hybrid');
    expect(reranked.results.map((r: any) => r.title)).toEqual(documents.map((d) => reranked.results.find((r: any) => d.startsWith(r.title)).title).reverse());
  });

  it('sends each candidate as its title, summary, recommendation and stack', async () => {
    const { reranker, sent } = fakeReranker(reversing);
    const out = await search({ query: 'how should I hash user passwords' }, { reranker });
    expect(slugs(out)).toEqual(['hash-passwords-with-argon2id-or-bcrypt']);
    expect(sent[0]).toHaveLength(1);
    const [document] = sent[0]!;
    expect(document).toMatch(/^Store passwords with a slow, salted password-hashing/);
    expect(document).toContain(out.results[0].recommendation);
  });

  it('sends no more candidates than it is allowed', async () => {
    const { reranker, sent } = fakeReranker(reversing);
    await search({ query: 'timeouts for outbound http calls', max_results: 10 }, { reranker, rerankCandidates: 2 });
    expect(sent[0]).toHaveLength(2);
  });

  it('shows nothing the reranker scores under its threshold: the answer is no_match, not degraded', async () => {
    const { reranker } = fakeReranker((documents) => ({ ok: true, scores: documents.map(() => 0.05) }));
    const out = await search({ query: 'how should I hash user passwords' }, { reranker });
    expect(out.results).toEqual([]);
    expect(out.retrieval).toMatchObject({ mode: 'no_match', degraded: false });
    expect(out.suggestions.join(' ')).toMatch(/do not invent guidance/);
  });

  it('keeps a no_match a no_match however highly the reranker would score it, and does not call it', async () => {
    const { reranker, sent } = fakeReranker((documents) => ({ ok: true, scores: documents.map(() => 0.99) }));
    const out = await search({ query: 'center a div horizontally and vertically with css' }, { reranker });
    expect(out.retrieval.mode).toBe('no_match');
    expect(out.retrieval.degraded).toBe(false);
    expect(sent).toEqual([]);
  });
});

describe('search_knowledge when the reranker fails', () => {
  const query = 'react state effect';
  const never = () => new Promise<RerankOutcome>(() => {});

  it.each([
    ['reports an error', () => ({ ok: false, failure: 'error', error: 'ThrottlingException' }) as const, 50, /^The reranker failed \(ThrottlingException\); the results are ranked without the reranker\.$/],
    ['throws', () => Promise.reject(new TypeError('broken adapter')), 1500, /^The reranker failed \(TypeError\)/],
    ['answers malformed scores', () => ({ ok: true, scores: [0.5] }) as const, 1500, /^The reranker failed \(MalformedRerankScores\)/],
    ['misses its deadline', never, 50, /^Reranking timed out after 50 ms; the results are ranked without the reranker\.$/],
  ])('answers as without a reranker, degraded, when the reranker %s', async (_case, score, rerankTimeoutMs, reason) => {
    // Prepare
    const { reranker } = fakeReranker(score as () => Promise<RerankOutcome>);
    const usual = await search({ query, max_results: 10 });
    store.logs.length = 0;

    // Act
    // A reranker that never answers would hold this search forever without the deadline: no timing asserted.
    const out = await search({ query, max_results: 10 }, { reranker, rerankTimeoutMs });

    // Assess
    expect(slugs(out)).toEqual(slugs(usual));
    expect(out.retrieval.mode).toBe(usual.retrieval.mode);
    expect(out.retrieval.degraded).toBe(true);
    expect(out.retrieval.degraded_reason).toMatch(reason);
    const failure = store.logs.map((line) => JSON.parse(line)).find((entry) => entry.event === 'rerank_failed');
    expect(failure, store.logs.join('\n')).toBeDefined();
    expect(store.logs.join('\n')).not.toContain(query);
  });

  it('adds its reason to the embedder’s when both failed', async () => {
    const { reranker } = fakeReranker(() => ({ ok: false, failure: 'error', error: 'AccessDeniedException' }));
    const embedder = { provider: 'bedrock', model: 'amazon.titan-embed-text-v2:0', dimensions: 512, embed: async () => Promise.reject(new Error('down')) };
    const out = await search({ query }, { reranker, embedder });
    expect(out.retrieval.mode).toBe('keyword_fallback');
    expect(out.retrieval.degraded_reason).toMatch(/^The embedding provider failed \(Error\); only full-text search ran\. The reranker failed \(AccessDeniedException\)/);
  });

  it('keeps a reranked answer in the answer cache, but never a degraded one', async () => {
    const cache = new SearchCache();
    const working = fakeReranker(reversing);
    await search({ query }, { reranker: working.reranker, cache });
    await search({ query }, { reranker: working.reranker, cache });
    expect(working.sent).toHaveLength(1);

    const failing = fakeReranker(() => ({ ok: false, failure: 'timeout' }));
    const other = { query: 'accessible name for buttons' };
    const first = await search(other, { reranker: failing.reranker, cache });
    const second = await search(other, { reranker: failing.reranker, cache });
    expect(failing.sent).toHaveLength(2);
    expect([first.retrieval.degraded, second.retrieval.degraded]).toEqual([true, true]);
  });
});
