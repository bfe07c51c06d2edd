/**
 * What a connected client costs the AWS runtime while it sits idle, measured with
 * the official MCP SDK client against the real gateway handler (`createGatewayHandler`
 * over `gatewayDeps`, the production wiring; GET also through the Lambda entry). Underneath: the Data API adapter
 * against the PGlite-backed Data API stand-in (which records every operation), the
 * DynamoDB quota store against dynalite (every request counted at the server), the
 * pepper from a mocked Secrets Manager client. Time is a fake clock: an hour of
 * connection passes in a moment, and the SDK client's own reconnect timer fires in it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startDataApiFixture } from '../support/data-api-fixture.ts';
import { createQuotaTable } from '../support/dynalite.ts';
import { GATEWAY_URL, gatewayFetch, toProxyEvent, type GatewayFetch, type ProxyHandler } from '../support/api-gateway-fetch.ts';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { SETTINGS, readSetting } from '../../lambdas/config/settings.ts';
import { GET_STREAM_RETRY_MS, createGatewayHandler, gatewayDeps } from '../../lambdas/aws/gateway.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';
import { listen } from '../../lambdas/local/listen.ts';
import { MCP_HEADERS } from '../support/mcp-client.ts';
import { EXPECTED_PROBE_ANSWERS, probeNewerRevision } from '../support/protocol-probe.ts';

const PEPPER_HEX = 'cd'.repeat(32);
const HOUR = 3_600_000;
const KEY_CACHE_SECONDS = 60;
// dynalite ships no type declarations; require it with the one signature used here.
const dynalite = createRequire(import.meta.url)('dynalite') as (options?: { createTableMs?: number }) => Server;

let fixture: Awaited<ReturnType<typeof startDataApiFixture>>;
let dynamoServer: Server;
let dynamoRequests = 0;
let keys: KeyRepository;
const secrets = mockClient(SecretsManagerClient);
const lambda = mockClient(LambdaClient);

/** Data API and DynamoDB requests so far. */
const backendCalls = () => ({ dataApi: fixture.operations.length, dynamo: dynamoRequests });

function productionGateway(): ProxyHandler {
  return createGatewayHandler(gatewayDeps(process.env, silentLogger));
}

async function connect(via: GatewayFetch, key?: string): Promise<Client> {
  const client = new Client({ name: 'idle-cost', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(GATEWAY_URL), {
    fetch: via.fetch,
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : undefined,
  });
  await client.connect(transport);
  // The client opens its GET stream after `notifications/initialized`, without being awaited: let it run.
  await vi.advanceTimersByTimeAsync(0);
  return client;
}

/** Lets `ms` of fake time pass in one-minute steps, so every timer due in it fires in order. */
async function pass(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 60_000) await vi.advanceTimersByTimeAsync(Math.min(60_000, left));
}

beforeAll(async () => {
  fixture = await startDataApiFixture();
  dynamoServer = dynalite({ createTableMs: 0 });
  await listen(dynamoServer, 0, '127.0.0.1');
  const dynamoEndpoint = `http://127.0.0.1:${(dynamoServer.address() as AddressInfo).port}`;
  const admin = new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  await createQuotaTable(admin, 'quota');
  admin.destroy();
  dynamoServer.on('request', () => {
    dynamoRequests += 1;
  });
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_RDS_DATA: fixture.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    [SETTINGS.dbClusterArn.env]: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx',
    [SETTINGS.dbSecretArn.env]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
    [SETTINGS.dbName.env]: 'chatctx',
    [SETTINGS.quotaTableName.env]: 'quota',
    [SETTINGS.pepperSecretArn.env]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:pepper',
    [SETTINGS.searchKnowledgeFunction.env]: 'fn-search',
    [SETTINGS.getGuidanceFunction.env]: 'fn-guidance',
    [SETTINGS.submitFeedbackFunction.env]: 'fn-feedback',
    [SETTINGS.guestDailyLimit.env]: '5',
    [SETTINGS.allowedHosts.env]: '*',
    [SETTINGS.allowedOrigins.env]: 'https://console.example',
    [SETTINGS.keyCacheSeconds.env]: String(KEY_CACHE_SECONDS),
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  // Tool functions are not under test here: each answers with an empty result.
  const empty = { content: [{ type: 'text', text: '{}' }], structuredContent: {} };
  lambda.on(InvokeCommand).callsFake(async () => ({ StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(empty)) }));
  const sql = new DataApiSql({
    client: new RDSDataClient({}),
    resourceArn: readSetting(process.env, 'dbClusterArn'),
    secretArn: readSetting(process.env, 'dbSecretArn'),
    database: 'chatctx',
  });
  await migrate(sql);
  keys = new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') });
}, 300_000);

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  secrets.restore();
  lambda.restore();
  await new Promise<void>((resolve) => dynamoServer?.close(() => resolve()));
  await fixture?.close();
});

/** Fake setTimeout and Date only: the HTTP stand-ins and PGlite keep their own clocks. */
/**
 * The clock at `start`. With `timers`, setTimeout is faked too, for tests that let
 * time pass; a test that only needs the date keeps real timers, so an AWS SDK retry
 * after a dropped keep-alive socket (its backoff is a setTimeout) is not frozen.
 */
function fakeClock(start: string, { timers = true } = {}): void {
  vi.useFakeTimers({ toFake: timers ? ['setTimeout', 'clearTimeout', 'Date'] : ['Date'] });
  vi.setSystemTime(new Date(start));
}

describe('an idle client on the AWS gateway', () => {
  it('reopens its GET stream once an hour, and no GET reaches Aurora or DynamoDB', async () => {
    const { key } = await keys.create('idle key', null);
    fakeClock('2026-03-02T10:00:30Z');
    const via = gatewayFetch(productionGateway());
    const client = await connect(via, key);
    expect(via.counts.GET).toBe(1);
    const afterHandshake = backendCalls();

    await pass(24 * HOUR);

    // One GET at connect, then one per retry hint: 25 in a day, each answered from memory.
    expect(via.counts.GET).toBe(1 + (24 * HOUR) / GET_STREAM_RETRY_MS);
    expect(backendCalls()).toEqual(afterHandshake);
    await client.close();
  });

  it('costs nothing through the Lambda entry either (no key lookup, no wake-up statement)', async () => {
    const entry = (await import('../../lambdas/handlers/gateway.ts')).handler as unknown as (event: unknown, context: Context) => Promise<APIGatewayProxyResult>;
    const context = { functionName: 'gateway', awsRequestId: 'r', getRemainingTimeInMillis: () => 29_000 } as unknown as Context;
    const before = backendCalls();
    const { key } = await keys.create('entry key', null);
    const afterCreate = backendCalls();
    expect(afterCreate.dataApi).toBe(before.dataApi + 1);
    for (const authorization of [undefined, `Bearer ${key}`]) {
      const request = new Request(GATEWAY_URL, { headers: { Accept: 'text/event-stream', ...(authorization ? { Authorization: authorization } : {}) } });
      const result = await entry(await toProxyEvent(request, '198.51.100.9'), context);
      expect(result.statusCode).toBe(200);
      expect(result.body).toBe(`: connected\nretry: ${GET_STREAM_RETRY_MS}\n\n`);
    }
    expect(backendCalls()).toEqual(afterCreate);
  });

  it('answers a guest GET without reading the guest quota, and keeps the free guards', async () => {
    fakeClock('2026-03-02T10:00:30Z');
    const via = gatewayFetch(productionGateway());
    const client = await connect(via);
    const afterHandshake = backendCalls();
    await pass(3 * HOUR);
    expect(via.counts.GET).toBe(4);
    expect(backendCalls()).toEqual(afterHandshake);
    await client.close();

    const get = (headers: Record<string, string>) => via.fetch(GATEWAY_URL, { headers });
    const stream = await get({ Accept: 'text/event-stream' });
    expect(stream.status).toBe(200);
    expect(await stream.text()).toBe(`: connected\nretry: ${GET_STREAM_RETRY_MS}\n\n`);
    expect((await get({ Accept: 'text/event-stream', Origin: 'https://evil.example' })).status).toBe(403);
    expect((await get({ Accept: 'application/json' })).status).toBe(406);
    // Even a bad key costs nothing on GET; its first POST is refused with 401.
    expect((await get({ Accept: 'text/event-stream', Authorization: 'Bearer kb_live_' + 'Q'.repeat(43) })).status).toBe(200);
    expect(backendCalls()).toEqual(afterHandshake);
  });

  it('refuses a guest over its daily quota after the DynamoDB counter alone: no guest call ever reaches Aurora', async () => {
    fakeClock('2026-03-04T09:00:00Z', { timers: false });
    const via = gatewayFetch(productionGateway());
    const client = await connect(via);
    const before = backendCalls();
    // CHATCTX_GUEST_DAILY_LIMIT is 5 here: five calls run, the sixth and seventh are refused.
    for (let call = 0; call < 5; call += 1) await client.callTool({ name: 'get_guidance', arguments: { id: 'any-record' } });
    await expect(client.callTool({ name: 'get_guidance', arguments: { id: 'any-record' } })).rejects.toThrow(/429|quota|Too Many/i);
    await expect(client.callTool({ name: 'get_guidance', arguments: { id: 'any-record' } })).rejects.toThrow(/429|quota|Too Many/i);
    const after = backendCalls();
    expect(after.dataApi).toBe(before.dataApi);
    expect(after.dynamo).toBeGreaterThan(before.dynamo);
    await client.close();
  });

  it('looks a key up once per cache period under steady traffic, and honours a revocation within it', async () => {
    const { key, id } = await keys.create('busy key', null);
    fakeClock('2026-03-02T11:00:30Z');
    const via = gatewayFetch(productionGateway());
    const client = await connect(via, key);
    const start = backendCalls();
    // A tools/list every 20 seconds for 10 minutes: 30 authenticated POSTs.
    for (let i = 0; i < 30; i++) {
      await pass(20_000);
      await client.listTools();
    }
    const lookups = backendCalls().dataApi - start.dataApi;
    expect(lookups).toBe((10 * 60) / KEY_CACHE_SECONDS);
    expect(backendCalls().dynamo).toBe(start.dynamo);

    // Revoked: the key may answer from memory for what is left of its period, never longer.
    await keys.revoke(id);
    await pass(KEY_CACHE_SECONDS * 1000);
    await expect(client.listTools()).rejects.toThrow(/invalid or revoked/);
    await client.close();
  });

  it('looks a key up again when the hour changes, so its hourly last use is stamped', async () => {
    const { key, id } = await keys.create('stamped key', null);
    fakeClock('2026-03-02T12:59:20Z');
    const via = gatewayFetch(productionGateway());
    const client = await connect(via, key);
    const before = backendCalls().dataApi;
    await pass(20_000);
    await client.listTools(); // 12:59:40, from memory
    expect(backendCalls().dataApi).toBe(before);
    await pass(30_000);
    await client.listTools(); // 13:00:10, a new hour: looked up (and stamped) again
    expect(backendCalls().dataApi).toBe(before + 1);
    expect(fixture.calls.at(-1)!.sql).toMatch(/UPDATE api_keys SET last_used_at/);
    expect((await keys.list()).find((k) => k.id === id)!.last_used_at).not.toBeNull();
    await client.close();
  });

  // About 15 s on an idle machine (3,700 simulated GETs through the whole gateway); four times that and more.
  it('measures how the SDK client reconnects for each way of answering GET', { timeout: 300_000 }, async () => {
    const deps = gatewayDeps(process.env, silentLogger);
    const closing = (retryMs: number): ProxyHandler => createGatewayHandler({ ...deps, config: { ...deps.config, getStream: { mode: 'close', retryMs } } });
    const refusing: ProxyHandler = async (event) =>
      event.httpMethod === 'GET' ? { statusCode: 405, multiValueHeaders: { allow: ['POST'] }, body: '' } : productionGateway()(event);
    const noHint: ProxyHandler = async (event) => {
      const result = await productionGateway()(event);
      return event.httpMethod === 'GET' ? { ...result, body: ': connected\n\n' } : result;
    };

    const hourWith = async (handler: ProxyHandler) => {
      fakeClock('2026-03-02T14:00:30Z');
      const via = gatewayFetch(handler);
      const client = await connect(via);
      const errors: string[] = [];
      client.onerror = (error) => errors.push(error.message);
      await pass(HOUR);
      const pendingTimers = vi.getTimerCount();
      await client.close();
      vi.useRealTimers();
      return { gets: via.counts.GET ?? 0, errors: errors.length, pendingTimers };
    };

    // No hint: the client's own backoff restarts at its first step (1 s) after every clean close.
    expect(await hourWith(noHint)).toEqual({ gets: 3601, errors: 0, pendingTimers: 1 });
    // The hint this gateway used to send.
    expect(await hourWith(closing(30_000))).toEqual({ gets: 121, errors: 0, pendingTimers: 1 });
    // The hint it sends now: one GET at connect, one an hour later, and the next already scheduled.
    expect(await hourWith(closing(GET_STREAM_RETRY_MS))).toEqual({ gets: 2, errors: 0, pendingTimers: 1 });
    // 405: the client takes "no stream here" silently and never asks again.
    expect(await hourWith(refusing)).toEqual({ gets: 1, errors: 0, pendingTimers: 0 });
  });
});

describe('a newer-revision probe on the AWS gateway', () => {
  it('answers the 2026 discover, refuses malformed probes with 400 or -32601, costs the guest nothing, and the 2025 client still connects', async () => {
    fakeClock('2026-03-02T15:00:30Z'); // one UTC day for the probes and the counted call
    const via = gatewayFetch(productionGateway(), '203.0.113.80');
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      via.fetch(GATEWAY_URL, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) });
    expect(await probeNewerRevision(post)).toEqual(EXPECTED_PROBE_ANSWERS);

    const client = await connect(via);
    expect(client.getServerVersion()?.name).toBe('chatctx-knowledge');
    await client.close();
    const counted = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_guidance', arguments: { ids: ['x'] } } });
    expect(counted.status).toBe(200);
    expect(counted.headers.get('x-guest-quota-remaining')).toBe('4');
  });
});
