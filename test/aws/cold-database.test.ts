/**
 * A paused Aurora cluster, end to end through the real Lambda entries on a fake
 * clock: the gateway entry (`lambdas/handlers/gateway.ts`) and the tool entries,
 * the Lambda service mocked at the SDK client, the Data API adapter against the
 * PGlite-backed fixture answering `DatabaseResumingException` until the simulated
 * resume ends, DynamoDB quota on dynalite. Each Lambda's context reports its
 * remaining time on the same fake clock (gateway 28 s, tools 20 s), so what is
 * asserted is what a client behind API Gateway (29 s) would see, without waiting.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { DataApiFixture } from '../support/data-api-fixture.ts';
import { TOOL_FUNCTIONS, startAwsBackends, type AwsBackends, answerInvokes, toolEntries } from '../support/aws-backends.ts';
import { FakeClock, pauseCluster } from '../support/paused-cluster.ts';
import { reviewedRecord } from '../support/records.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { runWithClock } from '../../lambdas/aws/invocation-deadline.ts';

const PEPPER_HEX = 'cd'.repeat(32);
const FUNCTIONS = TOOL_FUNCTIONS;
const GATEWAY_TIMEOUT_MS = 28_000;
const TOOL_TIMEOUT_MS = 20_000;
const API_GATEWAY_LIMIT_MS = 29_000;
/** Simulated time an Invoke takes each way. */
const INVOKE_LATENCY_MS = 150;
const SLUG = 'cold-cluster-record';
const ENDPOINT = 'https://abc123.execute-api.us-east-1.amazonaws.com/mcp';

const clock = new FakeClock();
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
let fixture: DataApiFixture;
let backends: AwsBackends;
let gateway: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let keys: KeyRepository;
const invocations: string[] = [];

/** A Lambda context whose remaining time runs on the fake clock. */
function contextFor(timeoutMs: number): Context {
  const endsAt = clock.now() + timeoutMs;
  return { functionName: 'test', awsRequestId: 'req', getRemainingTimeInMillis: () => endsAt - clock.now() } as unknown as Context;
}

function toEvent(method: string, body: string | null, headers: Record<string, string>, path = '/mcp'): APIGatewayProxyEvent {
  const all = { ...headers, Host: 'abc123.execute-api.us-east-1.amazonaws.com' };
  return {
    httpMethod: method,
    path,
    resource: path,
    headers: all,
    multiValueHeaders: Object.fromEntries(Object.entries(all).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: { stage: 'v1', domainName: 'abc123.execute-api.us-east-1.amazonaws.com', identity: { sourceIp: '198.51.100.20' } } as APIGatewayProxyEvent['requestContext'],
  };
}

/** One request through the gateway entry, timed on the fake clock. */
const elapsed: number[] = [];
const viaGateway: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  const event = toEvent(request.method, request.method === 'GET' ? null : await request.text(), headers);
  const started = clock.now();
  const result = await runWithClock(clock, () => gateway(event, contextFor(GATEWAY_TIMEOUT_MS)));
  elapsed.push(clock.now() - started);
  const out = new Headers();
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) for (const v of values) out.append(name, String(v));
  return new Response(result.statusCode === 202 || result.body === '' ? null : result.body, { status: result.statusCode, headers: out });
};

const post = (message: object, key?: string) =>
  viaGateway(ENDPOINT, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(key ? { Authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
  });

const INITIALIZE = { method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cold', version: '1.0.0' } } };
const GET_GUIDANCE = { method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: [SLUG] } } };

/** The JSON-RPC message inside an SSE-framed answer. */
async function rpcResult(response: Response): Promise<any> {
  const data = (await response.text()).split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data!.slice('data: '.length));
}

async function newKey(label: string): Promise<string> {
  return (await keys.create(label, null)).key;
}

beforeAll(async () => {
  backends = await startAwsBackends({ guestDailyLimit: '100', allowedOrigins: '', embeddings: 'none' });
  fixture = backends.fixture;
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });

  const sql = backends.sql;
  await importRecords(sql, await validateRecords([reviewedRecord(SLUG)], () => SLUG), { approve: true });
  keys = new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') });

  // The Lambda service: each tool function gets its own 20 s on the same clock.
  answerInvokes(lambda, await toolEntries(), () => contextFor(TOOL_TIMEOUT_MS), async (name, call) => {
    invocations.push(name);
    clock.advance(INVOKE_LATENCY_MS);
    const result = await call();
    clock.advance(INVOKE_LATENCY_MS);
    return result;
  });
  gateway = (await import('../../lambdas/handlers/gateway.ts')).handler as unknown as typeof gateway;
}, 300_000);

beforeEach(() => {
  // Long enough idle for the cluster to pause, and for the gateway to wake it again.
  clock.advance(15 * 60_000);
  elapsed.length = 0;
  invocations.length = 0;
});

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await backends?.close();
});

describe('a paused cluster that resumes within the deadline', () => {
  for (const resumeMs of [15_000, 25_000]) {
    it(`connects with a key and calls a tool, each request answered inside API Gateway's 29 s (resume ${resumeMs / 1000} s)`, async () => {
      // Prepare
      const key = await newKey(`resume ${resumeMs}`);
      const { wakesAt } = pauseCluster(fixture, clock, resumeMs);
      const client = new Client({ name: 'cold', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(ENDPOINT), { fetch: viaGateway, requestInit: { headers: { Authorization: `Bearer ${key}` } } });

      // Act
      await client.connect(transport);
      const result = await client.callTool({ name: 'get_guidance', arguments: { ids: [SLUG] } });

      // Assess: the handshake waited for the key lookup, through the resume, and no request came near the limits.
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ results: [{ slug: SLUG }], missing: [] });
      expect(clock.now()).toBeGreaterThanOrEqual(wakesAt);
      expect(elapsed[0]).toBeGreaterThanOrEqual(resumeMs);
      expect(Math.max(...elapsed)).toBeLessThan(GATEWAY_TIMEOUT_MS);
      expect(Math.max(...elapsed)).toBeLessThan(API_GATEWAY_LIMIT_MS);
      await client.close();
    });

    it(`answers a guest's tool call sent to the paused cluster inside 29 s (resume ${resumeMs / 1000} s)`, async () => {
      pauseCluster(fixture, clock, resumeMs);

      const response = await post(GET_GUIDANCE);

      expect(response.status).toBe(200);
      const message = await rpcResult(response);
      expect(message.result.isError).toBeFalsy();
      expect(message.result.structuredContent).toMatchObject({ results: [{ slug: SLUG }] });
      expect(elapsed[0]).toBeGreaterThanOrEqual(resumeMs);
      expect(elapsed[0]).toBeLessThan(GATEWAY_TIMEOUT_MS);
      // A resume longer than a tool function's own 20 s is waited out by invoking it again.
      expect(invocations).toEqual(resumeMs < TOOL_TIMEOUT_MS ? [FUNCTIONS.get_guidance] : [FUNCTIONS.get_guidance, FUNCTIONS.get_guidance]);
    });
  }
});

describe('a paused cluster still resuming at the deadline (60 s)', () => {
  it('answers a keyed initialize with 503 and Retry-After, never 500, before API Gateway gives up', async () => {
    const key = await newKey('resume 60 s');
    pauseCluster(fixture, clock, 60_000);

    const response = await post(INITIALIZE, key);

    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('10');
    const body = await response.json();
    expect(body.error.message).toMatch(/resuming.*Retry in 10 seconds/);
    expect(elapsed[0]).toBeLessThan(GATEWAY_TIMEOUT_MS);
  });

  it('answers an OAuth registration with 503 and Retry-After too, not a Lambda error', async () => {
    pauseCluster(fixture, clock, 60_000);
    const body = JSON.stringify({ client_name: 'Cold connector', redirect_uris: ['http://127.0.0.1:33418/callback'] });
    const event = toEvent('POST', body, { 'content-type': 'application/json' }, '/oauth/register');
    const result = await runWithClock(clock, () => gateway(event, contextFor(GATEWAY_TIMEOUT_MS)));
    expect(result.statusCode).toBe(503);
    expect(result.multiValueHeaders?.['retry-after']).toEqual(['10']);
    expect(JSON.parse(result.body)).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/try again in 10 seconds/) });
  });

  it("answers a tool call with the contract's structured unavailable error and a retry hint", async () => {
    pauseCluster(fixture, clock, 60_000);

    const response = await post(GET_GUIDANCE);

    expect(response.status).toBe(200);
    const { result } = await rpcResult(response);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: { code: 'unavailable', message: expect.stringMatching(/Retry in 10 seconds/), details: { retry_after_seconds: 10 } },
    });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
    expect(elapsed[0]).toBeLessThan(GATEWAY_TIMEOUT_MS);
  });
});

describe('starting the wake-up early', () => {
  it("answers a guest's initialize at once and starts resuming the cluster with it", async () => {
    pauseCluster(fixture, clock, 15_000);
    const before = fixture.calls.length;

    const response = await post(INITIALIZE);

    expect(response.status).toBe(200);
    expect((await rpcResult(response)).result.serverInfo.name).toBe('chatctx-knowledge');
    expect(elapsed[0]).toBeLessThanOrEqual(250);
    expect(fixture.calls.slice(before).map((call) => call.sql)).toEqual(['SELECT 1 AS awake']);
    // A second handshake in the same minute does not send another.
    await post({ method: 'tools/list' });
    expect(fixture.calls.length - before).toBe(1);
  });

  it('never touches the database for a GET stream', async () => {
    pauseCluster(fixture, clock, 15_000);
    const before = fixture.calls.length;
    const response = await viaGateway(ENDPOINT, { headers: { Accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    expect(fixture.calls.length).toBe(before);
  });
});
