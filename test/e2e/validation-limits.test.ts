/**
 * Every argument limit of the contract, one case on each side of each bound,
 * through the official client against the running server. Accepted calls succeed;
 * refused ones are `isError` results with `validation_error` naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  // Keyword-only: these cases are about argument checking, and this also covers a server with no embedder.
  server = await startPreparedServer({ CHATCTX_GUEST_DAILY_LIMIT: '100000', CHATCTX_EMBEDDINGS: 'none' });
  client = await connectClient(server.url);
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
});

const q = 'react keys';
const many = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i));
const versions = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`tech${i}`, '1.0.0']));

type Case = [label: string, tool: string, args: Record<string, unknown>, refusedField?: string];

const cases: Case[] = [
  ['query of 1 char', 'search_knowledge', { query: 'a' }, 'query'],
  ['query of 2 chars', 'search_knowledge', { query: 'ab' }],
  ['query of only spaces', 'search_knowledge', { query: '   ' }, 'query'],
  ['query of 2000 chars', 'search_knowledge', { query: 'react '.repeat(333) + 'ab' }],
  ['query of 2001 chars', 'search_knowledge', { query: 'a'.repeat(2001) }, 'query'],
  ['missing query', 'search_knowledge', {}, 'query'],
  ['10 technologies', 'search_knowledge', { query: q, technologies: many(10, (i) => `t${i}`) }],
  ['11 technologies', 'search_knowledge', { query: q, technologies: many(11, (i) => `t${i}`) }, 'technologies'],
  ['technology of 80 chars', 'search_knowledge', { query: q, technologies: ['t'.repeat(80)] }],
  ['technology of 81 chars', 'search_knowledge', { query: q, technologies: ['t'.repeat(81)] }, 'technologies.0'],
  ['empty technology', 'search_knowledge', { query: q, technologies: [''] }, 'technologies.0'],
  ['20 versions', 'search_knowledge', { query: q, versions: versions(20) }],
  ['21 versions', 'search_knowledge', { query: q, versions: versions(21) }, 'versions'],
  ['non-string version', 'search_knowledge', { query: q, versions: { React: 18 } }, 'versions.React'],
  ['topic string', 'search_knowledge', { query: q, topic: 'security' }],
  ['unknown topic', 'search_knowledge', { query: q, topic: 'cooking' }, 'topic'],
  ['3 topics', 'search_knowledge', { query: q, topic: ['security', 'testing', 'ux'] }],
  ['4 topics', 'search_knowledge', { query: q, topic: ['security', 'testing', 'ux', 'data'] }, 'topic'],
  ['empty topic list', 'search_knowledge', { query: q, topic: [] }, 'topic'],
  ['known task_type', 'search_knowledge', { query: q, task_type: 'debug' }],
  ['unknown task_type', 'search_knowledge', { query: q, task_type: 'party' }, 'task_type'],
  ['max_results 0', 'search_knowledge', { query: q, max_results: 0 }, 'max_results'],
  ['max_results 1', 'search_knowledge', { query: q, max_results: 1 }],
  ['max_results 10', 'search_knowledge', { query: q, max_results: 10 }],
  ['max_results 11', 'search_knowledge', { query: q, max_results: 11 }, 'max_results'],
  ['max_results 2.5', 'search_knowledge', { query: q, max_results: 2.5 }, 'max_results'],
  ['detail standard', 'search_knowledge', { query: q, detail: 'standard' }],
  ['detail full (get_guidance only)', 'search_knowledge', { query: q, detail: 'full' }, 'detail'],
  ['token_budget 199', 'search_knowledge', { query: q, token_budget: 199 }, 'token_budget'],
  ['token_budget 200', 'search_knowledge', { query: q, token_budget: 200 }],
  ['token_budget 5000', 'search_knowledge', { query: q, token_budget: 5000 }],
  ['token_budget 5001', 'search_knowledge', { query: q, token_budget: 5001 }, 'token_budget'],
  ['unknown property', 'search_knowledge', { query: q, limit: 3 }, ''],
  ['0 ids', 'get_guidance', { ids: [] }, 'ids'],
  ['1 id', 'get_guidance', { ids: ['use-stable-keys-for-dynamic-react-lists'] }],
  ['10 ids', 'get_guidance', { ids: many(10, (i) => `id-${i}`) }],
  ['11 ids', 'get_guidance', { ids: many(11, (i) => `id-${i}`) }, 'ids'],
  ['id of 120 chars', 'get_guidance', { ids: ['i'.repeat(120)] }],
  ['id of 121 chars', 'get_guidance', { ids: ['i'.repeat(121)] }, 'ids.0'],
  ['empty id', 'get_guidance', { ids: [''] }, 'ids.0'],
  ['detail brief', 'get_guidance', { ids: ['x'], detail: 'brief' }],
  ['detail standard (search only)', 'get_guidance', { ids: ['x'], detail: 'standard' }, 'detail'],
  ['unknown get_guidance property', 'get_guidance', { ids: ['x'], extra: true }, ''],
  ['known category', 'submit_feedback', { category: 'helpful' }],
  ['unknown category', 'submit_feedback', { category: 'angry' }, 'category'],
  ['missing category', 'submit_feedback', {}, 'category'],
  ['record of 120 chars (a valid length, but no such record)', 'submit_feedback', { category: 'missing', record: 'r'.repeat(120) }, 'record'],
  ['record of 121 chars', 'submit_feedback', { category: 'missing', record: 'r'.repeat(121) }, 'record'],
  ['known source', 'submit_feedback', { category: 'other', source: 'get_guidance' }],
  ['unknown source', 'submit_feedback', { category: 'other', source: 'email' }, 'source'],
  ['comment of 1000 chars', 'submit_feedback', { category: 'other', comment: 'c'.repeat(1000) }],
  ['comment of 1001 chars', 'submit_feedback', { category: 'other', comment: 'c'.repeat(1001) }, 'comment'],
  ['empty comment', 'submit_feedback', { category: 'other', comment: '' }, 'comment'],
  ['unknown submit_feedback property', 'submit_feedback', { category: 'other', ip: '1.2.3.4' }, ''],
];

describe('without an embedding provider', () => {
  it('answers in keyword_fallback mode and says why', async () => {
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'retry with exponential backoff' } });
    const retrieval = (result.structuredContent as any).retrieval;
    expect(retrieval).toMatchObject({ mode: 'keyword_fallback', degraded: true });
    expect(retrieval.degraded_reason).toMatch(/No embedding provider is configured/);
    expect(retrieval.embedding_provider).toBeUndefined();
  });
});

describe('errors that say how to fix the call', () => {
  it('refuses feedback about a record that is not approved, and stores nothing', async () => {
    const result = await client.callTool({ name: 'submit_feedback', arguments: { category: 'outdated', record: 'no-such-record' } });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as any).error;
    expect(error).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'record', code: 'unknown_record' }] } });
    expect(error.message).toMatch(/not the slug or id of an approved record/);
    const ok = await client.callTool({ name: 'submit_feedback', arguments: { category: 'outdated', record: 'use-stable-keys-for-dynamic-react-lists' } });
    expect(ok.isError).toBeFalsy();
  });

  it('lists the allowed values for a bad topic or task_type', async () => {
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'react keys', topic: 'frontend', task_type: 'coding' } });
    const issues = (result.structuredContent as any).error.details.issues as { path: string; allowed?: string[] }[];
    expect(issues.find((i) => i.path === 'topic')?.allowed).toEqual(expect.arrayContaining(['implementation', 'security', 'accessibility']));
    expect(issues.find((i) => i.path === 'task_type')?.allowed).toEqual(expect.arrayContaining(['build', 'debug', 'review']));
  });
});

describe('argument limits', () => {
  it.each(cases)('%s', async (_label, name, args, refusedField) => {
    const result = await client.callTool({ name, arguments: args });
    const body = result.structuredContent as any;
    if (refusedField === undefined) {
      expect(result.isError, JSON.stringify(body)).toBeFalsy();
      return;
    }
    expect(result.isError).toBe(true);
    expect(body.error.code).toBe('validation_error');
    expect(body.error.details.issues.map((i: { path: string }) => i.path)).toContain(refusedField);
    // Errors describe the problem without echoing the caller's values.
    expect(JSON.stringify(body)).not.toContain('c'.repeat(1001));
  });
});
