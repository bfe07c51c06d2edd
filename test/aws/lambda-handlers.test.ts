/**
 * The AWS runtime end to end, offline: the official MCP SDK client's HTTP requests
 * become API Gateway proxy events for the real gateway entry (`lambdas/handlers/gateway.ts`),
 * which dispatches each tools/call through the real Lambda ToolInvoker to the real
 * tool entries (the Lambda service mocked at the SDK client hands them the
 * serialized payload). Underneath: the Data API adapter against a Data-API-compatible
 * endpoint backed by PGlite, the DynamoDB quota store against dynalite, and the
 * pepper from a mocked Secrets Manager client. Endpoints are injected the way the
 * AWS SDK supports it: AWS_ENDPOINT_URL_<SERVICE> variables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mockClient } from 'aws-sdk-client-mock';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toProxyEvent } from '../support/api-gateway-fetch.ts';
import { startAwsBackends, type AwsBackends, answerInvokes, toolEntries, type LambdaEntry } from '../support/aws-backends.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { runRemoteAdmin } from '../../lambdas/aws/remote-admin.ts';
import { reviewedRecord } from '../support/records.ts';

const PEPPER_HEX = 'ab'.repeat(32);
const FUNCTIONS = { search_knowledge: 'fn-search', get_guidance: 'fn-guidance', submit_feedback: 'fn-feedback', admin: 'fn-admin' } as const;
const GUEST_LIMIT = 5;

let backends: AwsBackends;
let gateway: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let apiKey: string;
let revokedKey: string;
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
const invocations: string[] = [];

const context = { functionName: 'test', awsRequestId: 'req', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

/** A fetch that goes through the gateway Lambda instead of the network. */
function viaGateway(sourceIp = '198.51.100.7'): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const result = await gateway(await toProxyEvent(request, sourceIp), context);
    const headers = new Headers();
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) for (const v of values) headers.append(name, String(v));
    return new Response(result.statusCode === 202 || result.body === '' ? null : result.body, { status: result.statusCode, headers });
  };
}

async function connect(key?: string, sourceIp?: string): Promise<Client> {
  const client = new Client({ name: 'aws-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('https://abc123.execute-api.us-east-1.amazonaws.com/mcp'), {
    fetch: viaGateway(sourceIp),
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : undefined,
  });
  await client.connect(transport);
  return client;
}

const rawPost = (body: unknown, headers: Record<string, string> = {}, sourceIp?: string) =>
  viaGateway(sourceIp)('https://abc123.execute-api.us-east-1.amazonaws.com/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  backends = await startAwsBackends({ guestDailyLimit: String(GUEST_LIMIT), allowedOrigins: 'https://console.example', embeddings: 'none' });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });

  // The store, prepared as the migrate and admin functions would.
  const sql = backends.sql;
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  const keys = new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') });
  apiKey = (await keys.create('aws e2e', null)).key;
  const revoked = await keys.create('revoked', null);
  revokedKey = revoked.key;
  await keys.revoke(revoked.id);

  // The Lambda service: hand the serialized payload to the real tool entry.
  // What `chatctx --remote fn-admin …` invokes, beside the tools.
  const entries = { ...(await toolEntries()), [FUNCTIONS.admin]: (await import('../../lambdas/handlers/admin.ts')).handler as LambdaEntry };
  answerInvokes(lambda, entries, () => context, (name, call) => {
    invocations.push(name);
    return call();
  });
  gateway = (await import('../../lambdas/handlers/gateway.ts')).handler as unknown as typeof gateway;
}, 300_000);

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await backends?.close();
});

describe('AWS handlers', () => {
  it('completes the handshake and lists the tools without invoking any tool function', async () => {
    const client = await connect(apiKey);
    expect(client.getServerVersion()?.name).toBe('chatctx-knowledge');
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['get_guidance', 'search_knowledge', 'submit_feedback']);
    expect(invocations).toEqual([]);
    await client.close();
  });

  it('runs all three tools through their own functions over the Data API', async () => {
    const client = await connect(apiKey);
    const search = await client.callTool({ name: 'search_knowledge', arguments: { query: 'password hashing algorithm for user accounts' } });
    expect((search.structuredContent as any).results[0].slug).toBe('hash-passwords-with-argon2id-or-bcrypt');
    const full = await client.callTool({ name: 'get_guidance', arguments: { ids: ['use-stable-keys-for-dynamic-react-lists', 'nope'] } });
    expect(full.structuredContent).toMatchObject({ missing: ['nope'], results: [{ status: 'approved' }] });
    const feedback = await client.callTool({ name: 'submit_feedback', arguments: { category: 'helpful', source: 'search_knowledge' } });
    expect(feedback.structuredContent).toMatchObject({ accepted: true });
    expect(invocations).toEqual([FUNCTIONS.search_knowledge, FUNCTIONS.get_guidance, FUNCTIONS.submit_feedback]);
    await client.close();
  });

  it('refuses an unknown or revoked key with 401 and WWW-Authenticate', async () => {
    for (const key of [revokedKey, `kb_live_${'Z'.repeat(43)}`]) {
      const res = await rawPost({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { Authorization: `Bearer ${key}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="chatctx"/);
    }
  });

  it('refuses a foreign Origin with 403 and a request without the SSE Accept with 406', async () => {
    expect((await rawPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { Origin: 'https://evil.example' })).status).toBe(403);
    expect((await rawPost({ jsonrpc: '2.0', id: 1, method: 'ping' }, { Accept: 'application/json' })).status).toBe(406);
  });

  it('counts guest tool calls in DynamoDB by IP and answers 429 with Retry-After when spent', async () => {
    const ip = '203.0.113.44';
    const call = (id: number) => rawPost({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } }, {}, ip);
    const statuses = [];
    for (let i = 1; i <= GUEST_LIMIT + 1; i++) statuses.push((await call(i)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await call(99);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-guest-quota-remaining')).toBe('0');
    // Another client IP has its own counter.
    const other = await rawPost({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } }, {}, '203.0.113.45');
    expect(other.status).toBe(200);
  });

  it('issues a key through the admin entry that the gateway then accepts, and reports admin errors as values', async () => {
    const admin = (await import('../../lambdas/handlers/admin.ts')).handler as unknown as (event: unknown, context: Context) => Promise<any>;
    const created = await admin({ op: 'keys.create', name: 'from admin lambda', daily_quota: 1 }, context);
    expect(created.result.key).toMatch(/^kb_live_/);
    const ok = await rawPost({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } }, { Authorization: `Bearer ${created.result.key}` });
    expect(ok.status).toBe(200);
    const over = await rawPost({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } }, { Authorization: `Bearer ${created.result.key}` });
    expect(over.status).toBe(429);
    expect(await admin({ op: 'keys.revoke', id: '00000000-0000-4000-8000-000000000000' }, context)).toEqual({
      error: { code: 'not_found', message: 'No API key has that id.', details: { id: '00000000-0000-4000-8000-000000000000' } },
    });
  });

  it('scopes a key through the admin entry, and the feedback function refuses the key the scope does not allow', async () => {
    const admin = (await import('../../lambdas/handlers/admin.ts')).handler as unknown as (event: unknown, context: Context) => Promise<any>;
    const created = await admin({ op: 'keys.create', name: 'no feedback', daily_quota: null, collections: ['public'], feedback: false }, context);
    expect(created.result).toMatchObject({ collections: ['public'], feedback: false });
    const client = await connect(created.result.key);
    const refused = await client.callTool({ name: 'submit_feedback', arguments: { category: 'helpful', source: 'search_knowledge' } });
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as any).error.details.issues[0].code).toBe('feedback_not_in_scope');
    await client.close();
    const scoped = await admin({ op: 'keys.scope', id: created.result.id, add: ['feedback'] }, context);
    expect(scoped.result).toMatchObject({ collections: ['public'], feedback: true });
    expect((await admin({ op: 'keys.scope', id: created.result.id, add: ['intranet'] }, context)).error.code).toBe('not_found');
  });

  it('answers a CORS preflight for an allowed origin and refuses a foreign one', async () => {
    const preflight = (origin: string) =>
      viaGateway()('https://abc123.execute-api.us-east-1.amazonaws.com/mcp', {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
      });
    const ok = await preflight('https://console.example');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(ok.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect((await preflight('https://evil.example')).status).toBe(403);
  });

  it('answers GET with ": connected" and a one-hour retry hint, then closes (no idle Lambda time)', async () => {
    const res = await viaGateway()('https://abc123.execute-api.us-east-1.amazonaws.com/mcp', { headers: { Accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(': connected\nretry: 3600000\n\n');
  });
});

describe('owner review through chatctx --remote (the admin Lambda)', () => {
  const remote = async (command: Record<string, unknown>) =>
    runRemoteAdmin(FUNCTIONS.admin, command as never, new LambdaClient({ region: 'us-east-1' })) as Promise<any>;
  const slug = 'derive-values-during-render-instead-of-syncing-react-state';
  const starterFile = async () => JSON.parse(await readFile(join(STARTER_CORPUS_DIR, `${slug}.json`), 'utf8'));
  const served = async () => {
    const client = await connect(apiKey);
    const full = await client.callTool({ name: 'get_guidance', arguments: { ids: [slug] } });
    await client.close();
    return full.structuredContent as any;
  };

  it('runs the gates, refuses a failed one, and stores an override with its reviewer', async () => {
    const broken = reviewedRecord('remote-bad-range', { applies_to: [{ kind: 'database', name: 'PostgreSQL', version_constraint: 'not a semver range!!' }] });
    const [report] = await remote({ op: 'records.gates', records: [broken] });
    expect(report.gates.find((g: any) => g.code === 'version_scope')).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/is not a semver range/) });
    await expect(remote({ op: 'records.import', records: [broken], approve: true, reviewer: 'remote owner' })).rejects.toMatchObject({
      code: 'validation_error',
      details: { problems: [expect.objectContaining({ where: 'remote-bad-range' })] },
    });
    const old = reviewedRecord('remote-old-review', { reviewed_at: '2009-01-01' });
    const reason = 'Re-read the sources today; nothing changed since.';
    await remote({ op: 'records.import', records: [old], approve: true, reviewer: 'remote owner', overrides: [{ gate: 'freshness', reason }] });
    const shown = await remote({ op: 'records.show', id: 'remote-old-review' });
    expect(shown.approval).toMatchObject({ approved_by: 'remote owner', overrides: [{ gate: 'freshness', reason }] });
    expect(await remote({ op: 'records.stale' })).toContainEqual(expect.objectContaining({ slug: 'remote-old-review', verdict: 'fail' }));
  });

  it('stages a revision agents do not see until it is approved, with history and diff', async () => {
    const before = (await served()).results[0];
    const revised = { ...(await starterFile()), recommendation: 'Compute values from props and state while rendering; keep no copy of them in state.' };
    expect(await remote({ op: 'records.import', records: [revised], reviewer: 'remote owner' })).toMatchObject({ staged: 1 });
    expect((await served()).results[0]).toEqual(before);
    expect((await remote({ op: 'records.diff', id: slug })).changes.map((c: any) => c.field)).toEqual(['recommendation']);
    await remote({ op: 'records.approve', ids: [slug], reviewer: 'remote owner' });
    expect((await served()).results[0]).toMatchObject({ content_version: before.content_version + 1, recommendation: revised.recommendation });
    const history = await remote({ op: 'records.history', id: slug });
    expect(history.versions.map((v: any) => v.content_version)).toEqual([1, 2]);
    expect((await remote({ op: 'records.diff', id: slug, from: 1, to: 2 })).changes[0].diff).toContain('{+Compute');
  });

  it('runs the owner console operations through the admin function over the Data API: queue, reject, explained search, feedback review, records most shown', async () => {
    await remote({ op: 'records.import', records: [reviewedRecord('remote-candidate')] });
    const queue = await remote({ op: 'records.queue' });
    expect(queue).toContainEqual(expect.objectContaining({ slug: 'remote-candidate', kind: 'candidate', gates: expect.objectContaining({ slug: 'remote-candidate' }) }));
    const reason = 'Its source says something else entirely.';
    expect(await remote({ op: 'records.reject', ids: ['remote-candidate'], reviewer: 'remote owner', reason })).toMatchObject({ rejected: 1, records: [{ kind: 'candidate' }] });
    expect((await remote({ op: 'records.history', id: 'remote-candidate' })).rejections).toEqual([expect.objectContaining({ kind: 'candidate', rejected_by: 'remote owner', reason })]);

    const client = await connect(apiKey);
    const question = { query: 'deep pagination with OFFSET is slow' };
    const agent = (await client.callTool({ name: 'search_knowledge', arguments: question })).structuredContent as any;
    const feedback = (await client.callTool({ name: 'submit_feedback', arguments: { category: 'helpful', record: agent.results[0].slug } })).structuredContent as any;
    await client.close();
    const owner = await remote({ op: 'records.search', arguments: question });
    expect(owner.result.results.map((r: any) => r.slug)).toEqual(agent.results.map((r: any) => r.slug));
    expect(owner.explain.candidates.filter((c: any) => c.outcome === 'cut').every((c: any) => typeof c.reason === 'string')).toBe(true);

    expect(await remote({ op: 'feedback.review', ids: [feedback.id] })).toEqual({ reviewed: 1, already_reviewed: 0 });
    expect((await remote({ op: 'feedback.list', reviewed: false })).map((f: any) => f.id)).not.toContain(feedback.id);
    // The search function wrote the ids it returned through the Data API; the owner's search wrote nothing.
    const report = await remote({ op: 'analytics.report', days: 1 });
    expect(report.top_records).toContainEqual(expect.objectContaining({ slug: agent.results[0].slug, shown: expect.any(Number) }));
  });

  it("calibrates the stack's relevance profile through the admin function, which the search function then reads from Aurora", async () => {
    const search = async (query: string) => {
      const client = await connect(apiKey);
      const out = await client.callTool({ name: 'search_knowledge', arguments: { query } });
      await client.close();
      return out.structuredContent as any;
    };
    const question = 'deep pagination with OFFSET is slow';
    expect((await search(question)).results[0]?.slug).toBe('use-keyset-pagination-instead-of-large-offset');
    const listed = await remote({ op: 'relevance.list' });
    expect(listed).toMatchObject({ active: 'none', stored: [] });
    const replayed = await remote({ op: 'relevance.replay', mode: 'keyword', questions: [{ query: question }, { query: 'best sourdough hydration' }] });
    expect(replayed.profile).toBe('none');
    expect(replayed.replays[0].candidates[0]).toMatchObject({ slug: 'use-keyset-pagination-instead-of-large-offset', features: expect.objectContaining({ coverage: expect.any(Number) }) });
    // A profile that admits nothing, stored where the search function reads it: the next search says no_match.
    const strict = { ...listed.profiles.none, threshold: 1, calibrated: true, fitted: { note: 'admits nothing' } };
    expect((await remote({ op: 'relevance.save', profile: strict })).stored.map((p: any) => p.profile)).toEqual(['none']);
    expect((await search(question)).retrieval.mode).toBe('no_match');
    await remote({ op: 'relevance.remove', profile: 'none' });
    expect((await search(question)).results[0]?.slug).toBe('use-keyset-pagination-instead-of-large-offset');
    // Synonyms go the same way.
    await remote({ op: 'policy.synonym', term: 'paging cliff', expansions: ['deep OFFSET pagination'] });
    expect((await search('our paging cliff')).results[0]?.slug).toBe('use-keyset-pagination-instead-of-large-offset');
    expect((await remote({ op: 'policy.list' })).synonyms.added).toEqual([expect.objectContaining({ term: 'paging cliff' })]);
  });

  it('deprecates with a successor that get_guidance names, and reports analytics', async () => {
    await remote({ op: 'records.deprecate', ids: ['remote-old-review'], superseded_by: slug, reason: 'folded into another record' });
    const client = await connect(apiKey);
    const full = await client.callTool({ name: 'get_guidance', arguments: { ids: ['remote-old-review'] } });
    await client.close();
    expect(full.structuredContent).toEqual({ results: [], missing: ['remote-old-review'], superseded_by: { 'remote-old-review': slug } });
    const report = await remote({ op: 'analytics.report', days: 7 });
    expect(report.searches).toBeGreaterThanOrEqual(1);
    expect(report.feedback.by_category.helpful).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(report)).not.toMatch(/query_hash/);
    expect(await remote({ op: 'policy.change', kind: 'technology', value: 'Elixir' })).toMatchObject({ added: [expect.objectContaining({ value: 'Elixir' })] });
  });
});

