/**
 * search_knowledge behaviour on the starter corpus, in-process over the real
 * embedded Postgres: relevance threshold, technology filter fallback, version
 * applicability, detail levels and the token budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from 'gpt-tokenizer';
import { memoryStore, type MemoryStore } from '../support/store.ts';

let store: MemoryStore;
const search = async (args: Record<string, unknown>) => {
  const result = await store.tools.search_knowledge(args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as any;
};

beforeAll(async () => {
  store = await memoryStore();
});

afterAll(async () => {
  await store.sql.close();
});

describe('relevance', () => {
  it.each([
    ['password hashing algorithm for user accounts', 'hash-passwords-with-argon2id-or-bcrypt'],
    ['SQL injection in a query built with string concatenation', 'use-parameterized-queries-to-prevent-sql-injection'],
    ['icon button has no accessible name for screen readers', 'give-icon-only-buttons-an-accessible-name'],
    ['deep pagination with OFFSET is slow', 'use-keyset-pagination-instead-of-large-offset'],
    ['outbound fetch hangs forever without a timeout', 'set-outbound-fetch-timeouts-with-abortsignal-timeout-in-nodejs'],
  ])('ranks the matching record first for "%s"', async (query, slug) => {
    const out = await search({ query });
    expect(out.results[0]?.slug).toBe(slug);
  });

  it('answers no_match with suggestions when nothing clears the threshold', async () => {
    const out = await search({ query: 'best sourdough hydration for rye loaves', technologies: ['Baking'], topic: 'data' });
    expect(out.results).toEqual([]);
    expect(out.retrieval.mode).toBe('no_match');
    expect(out.suggestions.join(' ')).toMatch(/has no guidance for Baking/);
    expect(out.suggestions.join(' ')).toMatch(/topic/);
    expect(out.suggestions.join(' ')).toMatch(/submit_feedback/);
  });

  it('names what the corpus covers near the question, with record counts', async () => {
    // Near the React guidance (re-renders, state) but about a framework the corpus does not cover.
    const out = await search({ query: 'Blazor WebAssembly component re-renders too often' });
    expect(out.retrieval.mode).toBe('no_match');
    const near = out.suggestions.find((s: string) => s.startsWith('Closest coverage'));
    expect(near).toMatch(/React \(\d+ records?\)/);
    expect(near).toMatch(/topics .*\(\d+ records?\)/);
  });

  it('does not present a record that shares only a common word with the query', async () => {
    const out = await search({ query: 'center a div horizontally and vertically with css' });
    expect(out.retrieval.mode).toBe('no_match');
  });

  it('reports honest candidate counts', async () => {
    const out = await search({ query: 'react state effect', max_results: 1 });
    expect(out.results).toHaveLength(1);
    expect(out.retrieval.total_candidates).toBeGreaterThan(1);
  });
});

describe('technologies and versions', () => {
  it('answers without the requested technologies when no record declares them, and says so', async () => {
    const out = await search({ query: 'how should I hash user passwords', technologies: ['Django'] });
    expect(out.retrieval.technology_filter_fallback).toBe(true);
    expect(out.results[0].slug).toBe('hash-passwords-with-argon2id-or-bcrypt');
  });

  it('raises records that declare a requested technology, without hiding the ones that do not', async () => {
    const out = await search({ query: 'state after reordering list', technologies: ['react'] });
    expect(out.retrieval.technology_filter_fallback).toBe(false);
    expect(out.results[0].applies_to.map((a: any) => a.name)).toContain('React');
  });

  it('keeps a record about a technology used together with the requested one', async () => {
    // PostgreSQL guidance under a Node.js question, and HTTP guidance under Node.js and TypeScript.
    const paging = await search({ query: 'slow pagination with OFFSET', technologies: ['Node.js'] });
    expect(paging.results.map((r: any) => r.slug)).toContain('use-keyset-pagination-instead-of-large-offset');
    const retry = await search({ query: 'retry failed HTTP calls with backoff', technologies: ['Node.js', 'TypeScript'] });
    expect(retry.results.map((r: any) => r.slug)).toContain('retry-with-capped-exponential-backoff-jitter-and-retry-after');
    // technology_filter_fallback is true exactly when nothing shown declares a requested technology.
    for (const out of [paging, retry]) {
      const declares = out.results.some((r: any) => r.applies_to.some((a: any) => ['Node.js', 'TypeScript'].includes(a.name)));
      expect(out.retrieval.technology_filter_fallback).toBe(!declares);
    }
  });

  it('never presents a record as applying to a version outside its constraint', async () => {
    const query = 'accessible label ids for form fields in React components';
    const ok = await search({ query, technologies: ['React'], versions: { React: '18.2.0' } });
    const applying = ok.results.find((r: any) => r.slug === 'generate-accessible-label-ids-with-react-useid');
    expect(applying.applicability_note).toBeUndefined();

    const old = await search({ query, technologies: ['React'], versions: { React: '17.0.2' }, max_results: 10 });
    const slugs = old.results.map((r: any) => r.slug);
    const excluded = old.results.find((r: any) => r.slug === 'generate-accessible-label-ids-with-react-useid');
    expect(excluded.applicability_note).toMatch(/React >=18.*17\.0\.2/);
    // Every record that applies ranks above the one that does not.
    const applyingAfter = old.results.slice(slugs.indexOf(excluded.slug) + 1).filter((r: any) => !r.applicability_note);
    expect(applyingAfter).toEqual([]);
  });
});

describe('answer shaping', () => {
  it('brief omits reasoning fields; standard includes them with evidence', async () => {
    const brief = await search({ query: 'react list keys reorder' });
    expect(brief.results[0]).not.toHaveProperty('rationale');
    expect(brief.results[0].sources[0]).not.toHaveProperty('evidence_excerpt');
    const standard = await search({ query: 'react list keys reorder', detail: 'standard' });
    expect(standard.results[0].rationale).toBeTruthy();
    expect(standard.results[0].pitfalls.length).toBeGreaterThan(0);
    expect(standard.results[0].sources[0].evidence_excerpt).toBeTruthy();
  });

  it('cuts the result list to the token budget, counted with the tokenizer, and says so', async () => {
    const args = { query: 'Lambda and SQS: visibility timeout, partial batch failures, dead-letter queue', detail: 'standard', max_results: 10 };
    const full = await search({ ...args, token_budget: 5000 });
    expect(full.results.length).toBeGreaterThan(1);

    const cut = await search({ ...args, token_budget: 1000 });
    expect(cut.retrieval.truncated).toBe(true);
    expect(cut.results.length).toBeLessThan(full.results.length);
    expect(cut.results.length).toBeGreaterThan(0);
    expect(countTokens(JSON.stringify(cut))).toBeLessThanOrEqual(1000);
    expect(cut.results.map((r: any) => r.slug)).toEqual(full.results.slice(0, cut.results.length).map((r: any) => r.slug));
    expect(cut.suggestions.join(' ')).toMatch(/token_budget/);
  });

  it.each([200, 201, 2500, 5000])('never sends more than a budget of %i tokens, whatever max_results asks for', async (budget) => {
    const result = await store.tools.search_knowledge({ query: 'Lambda and SQS: visibility timeout, partial batch failures, dead-letter queue', max_results: 10, detail: 'standard', token_budget: budget });
    const text = (result.content as { text: string }[])[0]!.text;
    const out = result.structuredContent as any;
    // What an agent's model reads (the text; the structured content is the same JSON) fits the budget.
    expect(countTokens(text)).toBeLessThanOrEqual(budget);
    expect(JSON.parse(text)).toEqual(out);
    expect(out.results.length).toBeGreaterThanOrEqual(1);
    if (budget <= 201) expect(out.retrieval.truncated).toBe(true);
    if (out.retrieval.truncated) expect(out.suggestions.join(' ')).toMatch(/token_budget/);
    for (const r of out.results) for (const field of ['conditions', 'exceptions', 'pitfalls', 'verification_checks', 'sources']) expect(Array.isArray(r[field]), field).toBe(true);
  });

  it('always returns the top match, in brief form, when even one full result exceeds a tiny budget', async () => {
    const out = await search({ query: 'react list keys reorder', detail: 'standard', token_budget: 200 });
    expect(out.results).toHaveLength(1);
    expect(out.results[0]).not.toHaveProperty('rationale');
    expect(out.results[0].pitfalls.length).toBeLessThanOrEqual(2);
    expect(out.retrieval.truncated).toBe(true);
  });
});

describe('analytics', () => {
  it('answers the search even when its analytics row cannot be written, and reports the loss', async () => {
    const own = await memoryStore();
    try {
      await own.sql.query('DROP TABLE search_events');
      const result = await own.tools.search_knowledge({ query: 'password hashing algorithm for user accounts' });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as any).results[0].slug).toBe('hash-passwords-with-argon2id-or-bcrypt');
      expect(own.logs.join('\n')).toMatch(/"event":"search_event_failed"/);
    } finally {
      await own.sql.close();
    }
  });
});
