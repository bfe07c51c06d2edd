/**
 * No leaks, AWS runtime: the real tool Lambda entries over the Data API stand-in
 * (PGlite behind the real RDS Data client), given the `scope` the gateway sends in
 * the payload, and the real gateway entry resolving a real key to that scope.
 *
 * Store B (the starter corpus) is built and asked first, on its own backends; then
 * store A (the starter corpus and the `internal` collection of
 * test/support/collection-leaks.ts) on fresh ones, with the function modules loaded
 * anew, as a new deployment would. Embeddings are Bedrock's, mocked at the SDK
 * client, which answers each text with the bundled encoder's real vector for it
 * (the starter corpus's from its shipped seed), so search runs hybrid on vectors
 * that mean something and the records are embedded the way the admin function
 * embeds them.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { BedrockRuntimeClient, InvokeModelCommand, type InvokeModelCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toProxyEvent } from '../support/api-gateway-fetch.ts';
import { answerInvokes, startAwsBackends, toolEntries, TOOL_FUNCTIONS, type AwsBackends, type LambdaEntry } from '../support/aws-backends.ts';
import { seededUseLite } from '../support/store.ts';
import { INTERNAL, QUESTIONS, addInternalCollection, answerExactlyUpTo, comparable, internalMentions, scopedKeys, slugsOf, withIdAs, type ScopedKeys } from '../support/collection-leaks.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { BedrockEmbedder } from '../../lambdas/embeddings/bedrock-embedder.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import type { SeededEmbedder } from '../../lambdas/embeddings/embedding-seed.ts';

const PEPPER_HEX = 'cd'.repeat(32);
const pepper = { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') };
const context = { functionName: 'test', awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
const bedrock = mockClient(BedrockRuntimeClient);

/** A smaller set than the local runtime's: internal, public, both, and the guests' no_match. */
const ASKED = QUESTIONS.filter((q) => /retry client|no_match|password|retry backoff|PII in logs/.test(q.name));
const UNKNOWN = 'no-such-record-anywhere';

let encoder: SeededEmbedder;
/** Every text's vector once: the encoder is slow on a first call, and a query past its deadline would degrade the answer. */
const vectors = new Map<string, Promise<Float32Array>>();
let backends: AwsBackends | undefined;
let entries: Record<string, LambdaEntry>;
let gateway: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
/** Store B's answers to a guest, by question name. */
const storeB = new Map<string, any>();
let internalId: number;
let keys: ScopedKeys;

const vectorOf = (text: string) => {
  if (!vectors.has(text)) vectors.set(text, encoder.embed([text]).then(([v]) => v!));
  return vectors.get(text)!;
};

/** A migrated store over the Data API with the starter corpus embedded (and store A's internal collection), and the function modules loaded anew. */
async function freshStore(withInternal: boolean): Promise<AwsBackends> {
  vi.resetModules();
  const started = await startAwsBackends({ embeddings: 'bedrock' });
  await importRecords(started.sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  // Both stores answer exactly, as the local test explains: two HNSW graphs can differ by a near tie.
  await answerExactlyUpTo(started.sql, 3_000);
  if (withInternal) {
    internalId = await addInternalCollection(started.sql);
    keys = await scopedKeys(started.sql, pepper, internalId);
  }
  const embedder = new BedrockEmbedder({ client: new BedrockRuntimeClient({ region: 'us-east-1' }), timeoutMs: 60_000 });
  await embedRecords(started.sql, embedder, await recordsToEmbed(started.sql, embedder.model));
  entries = await toolEntries();
  return started;
}

type Scope = { collections: number[]; feedback: boolean } | undefined;

/** A tool function invoked as the gateway invokes it, with the caller's scope in the payload (none: a guest). */
async function invoke(tool: keyof typeof TOOL_FUNCTIONS, args: Record<string, unknown>, scope?: Scope): Promise<any> {
  const result = (await entries[TOOL_FUNCTIONS[tool]]!({ arguments: args, ...(scope ? { scope } : {}) }, context)) as any;
  return result.isError ? { isError: true, ...result.structuredContent } : result.structuredContent;
}

beforeAll(async () => {
  encoder = await seededUseLite();
  await Promise.all(ASKED.map((q) => vectorOf(String(q.args.query))));
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  bedrock.on(InvokeModelCommand).callsFake(async (input: { body: string }): Promise<InvokeModelCommandOutput> => {
    const { inputText } = JSON.parse(input.body) as { inputText: string };
    const body = new TextEncoder().encode(JSON.stringify({ embedding: Array.from(await vectorOf(inputText)), inputTextTokenCount: 8 }));
    return { body: body as InvokeModelCommandOutput['body'], contentType: 'application/json', $metadata: {} };
  });

  backends = await freshStore(false);
  for (const question of ASKED) storeB.set(question.name, await invoke('search_knowledge', question.args));
  storeB.set('get_guidance', await invoke('get_guidance', { ids: [INTERNAL.pii, INTERNAL.oldRetry] }));
  await backends.close();

  backends = await freshStore(true);
  answerInvokes(lambda, entries, () => context);
  gateway = (await import('../../lambdas/handlers/gateway.ts')).handler as unknown as typeof gateway;
}, 900_000);

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  bedrock.restore();
  await backends?.close();
});

const PUBLIC_SCOPE = { collections: [1], feedback: true };
const internalScope = () => ({ collections: [1, internalId], feedback: true });

describe('the tool functions with the scope the gateway sends', () => {
  it('answer a guest and a public-only scope from store A exactly as store B answers, and the internal scope with its records', async () => {
    for (const question of ASKED) {
      const expected = comparable(storeB.get(question.name));
      // The internal scope asks first, so its kept answer is there to be wrongly served.
      const internal = await invoke('search_knowledge', question.args, internalScope());
      const guest = await invoke('search_knowledge', question.args);
      const publicOnly = await invoke('search_knowledge', question.args, PUBLIC_SCOPE);
      for (const [who, answer] of [['guest', guest], ['public only', publicOnly]] as const) {
        expect(comparable(answer), `${question.name}: ${who}`).toEqual(expected);
        expect(internalMentions(answer), `${question.name}: ${who}`).toEqual([]);
        expect(answer.retrieval.degraded).toBe(false);
      }
      if (question.internal) expect(slugsOf(internal), question.name).toContain(question.internal);
    }
    expect(storeB.get(ASKED.find((q) => q.name.includes('no_match'))!.name).retrieval.mode).toBe('no_match');
    expect(storeB.get(ASKED.find((q) => q.name.includes('password'))!.name).retrieval.mode).toBe('hybrid');
  });

  it('list an internal slug, id or deprecated record as missing for a guest, exactly like an unknown one and like store B', async () => {
    const [pii] = await backends!.sql.query<{ id: string }>('SELECT id::text AS id FROM records WHERE slug = $1', [INTERNAL.pii]);
    const piiId = pii!.id;
    const unknown = await invoke('get_guidance', { ids: [UNKNOWN] });
    for (const identifier of [INTERNAL.pii, piiId, INTERNAL.oldRetry]) {
      for (const scope of [undefined, PUBLIC_SCOPE]) {
        expect(withIdAs(await invoke('get_guidance', { ids: [identifier] }, scope), identifier, UNKNOWN)).toEqual(unknown);
      }
    }
    expect(await invoke('get_guidance', { ids: [INTERNAL.pii, INTERNAL.oldRetry] })).toEqual(storeB.get('get_guidance'));
    const internal = await invoke('get_guidance', { ids: [INTERNAL.pii, INTERNAL.oldRetry] }, internalScope());
    expect(slugsOf(internal)).toEqual([INTERNAL.pii]);
    expect(internal.superseded_by).toEqual({ [INTERNAL.oldRetry]: INTERNAL.retry });
  });

  it('refuse a guest feedback naming an internal record as `unknown_record`, like a made-up slug, and store nothing', async () => {
    const unknown = await invoke('submit_feedback', { category: 'helpful', record: UNKNOWN });
    expect(unknown).toMatchObject({ isError: true, error: { code: 'validation_error', details: { issues: [{ path: 'record', code: 'unknown_record' }] } } });
    expect(withIdAs(await invoke('submit_feedback', { category: 'helpful', record: INTERNAL.pii }), INTERNAL.pii, UNKNOWN)).toEqual(unknown);
    expect(await backends!.sql.query('SELECT id FROM feedback')).toEqual([]);
  });
});

/** The official MCP SDK client, its requests handed to the gateway entry as API Gateway events. */
async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'collection-leaks', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('https://abc123.execute-api.us-east-1.amazonaws.com/mcp'), {
    fetch: async (input, init) => {
      const result = await gateway(await toProxyEvent(new Request(input, init), '198.51.100.9'), context);
      const headers = new Headers();
      for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) for (const v of values) headers.append(name, String(v));
      return new Response(result.statusCode === 202 || result.body === '' ? null : result.body, { status: result.statusCode, headers });
    },
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

describe('the gateway, resolving a real key to its scope', () => {
  it('gives the internal key its records and the public-only key exactly store B answer, and records the collection set, not the key', async () => {
    const question = ASKED.find((q) => q.internal === INTERNAL.retry)!;
    const wide = await connect(keys.internal.key);
    const narrow = await connect(keys.publicOnly.key);
    const before = await backends!.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM search_events');
    const widened = (await wide.callTool({ name: 'search_knowledge', arguments: { ...question.args, detail: 'brief' } })).structuredContent;
    const narrowed = (await narrow.callTool({ name: 'search_knowledge', arguments: question.args })).structuredContent;
    await wide.close();
    await narrow.close();
    expect(slugsOf(widened)).toContain(INTERNAL.retry);
    expect(comparable(narrowed)).toEqual(comparable(storeB.get(question.name)));

    const events = await backends!.sql.query<{ collections: number[]; row: string }>(
      'SELECT collections, row_to_json(e)::text AS row FROM search_events e ORDER BY id OFFSET $1',
      [before[0]!.n],
    );
    expect(events.map((e) => e.collections)).toEqual([[1, internalId], [1]]);
    const secretsOfKeys = [keys.internal.id, keys.publicOnly.id, keys.internal.key, keys.publicOnly.key];
    expect(events.filter((e) => secretsOfKeys.some((s) => e.row.includes(s)))).toEqual([]);
  });
});
