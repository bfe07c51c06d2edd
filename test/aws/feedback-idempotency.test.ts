/**
 * A `submit_feedback` call delivered twice stores one row. On AWS the gateway
 * invokes the tool function synchronously; when a response is lost the Lambda
 * client (or the gateway, for a tool that answered `unavailable`) invokes it again
 * with the same payload. Here the Lambda service is mocked at the SDK client and
 * delivers every invoke to the real tool entry twice, the official SDK client talks
 * to the real gateway entry, and the Data API stand-in (PGlite) holds the rows.
 * The stored rows keep no trace of who sent them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { DataApiFixture } from '../support/data-api-fixture.ts';
import { startAwsBackends, type AwsBackends } from '../support/aws-backends.ts';
import { GATEWAY_URL, gatewayFetch } from '../support/api-gateway-fetch.ts';
import { createGatewayHandler, gatewayDeps } from '../../lambdas/aws/gateway.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';

let fixture: DataApiFixture;
let backends: AwsBackends;
let client: Client;
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
const deliveries: unknown[] = [];
const context = { functionName: 'fn-feedback', awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

const feedbackRows = async () => (await fixture.db.query<Record<string, unknown>>('SELECT * FROM feedback ORDER BY created_at, id')).rows;

beforeAll(async () => {
  backends = await startAwsBackends({ guestDailyLimit: '50', allowedOrigins: '' });
  fixture = backends.fixture;
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: 'ef'.repeat(32) }) });

  const submitFeedback = (await import('../../lambdas/handlers/submit-feedback.ts')).handler as unknown as (event: unknown, context: Context) => Promise<unknown>;
  // The first answer is lost on the way back; the retry carries the very same payload.
  lambda.on(InvokeCommand).callsFake(async (input: { Payload: Uint8Array }) => {
    const event = JSON.parse(new TextDecoder().decode(input.Payload));
    deliveries.push(event);
    await submitFeedback(event, context);
    deliveries.push(event);
    const result = await submitFeedback(event, context);
    return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(result)) };
  });

  client = new Client({ name: 'feedback-retry', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(GATEWAY_URL), { fetch: gatewayFetch(createGatewayHandler(gatewayDeps(process.env, silentLogger))).fetch }));
}, 300_000);

afterAll(async () => {
  await client?.close();
  lambda.restore();
  secrets.restore();
  await backends?.close();
});

describe('submit_feedback delivered twice', () => {
  it('stores one row, and the retry answers with the same id', async () => {
    const result = await client.callTool({ name: 'submit_feedback', arguments: { category: 'missing', source: 'search_knowledge', comment: 'nothing on Elixir releases' } });
    expect(result.isError).toBeFalsy();
    expect(deliveries).toHaveLength(2);
    const rows = await feedbackRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: (result.structuredContent as { id: string }).id, category: 'missing', comment: 'nothing on Elixir releases' });
  });

  it('keeps two separate calls with the same text as two rows', async () => {
    const args = { category: 'helpful', source: 'search_knowledge' };
    const first = await client.callTool({ name: 'submit_feedback', arguments: args });
    const second = await client.callTool({ name: 'submit_feedback', arguments: args });
    expect((first.structuredContent as { id: string }).id).not.toBe((second.structuredContent as { id: string }).id);
    expect((await feedbackRows()).filter((r) => r.category === 'helpful')).toHaveLength(2);
  });

  it('stores nothing about the caller: the rows hold only the feedback', async () => {
    expect(Object.keys((await feedbackRows())[0]!).sort()).toEqual(['category', 'comment', 'created_at', 'id', 'record_ref', 'reviewed_at', 'source']);
    // The key the tool was handed is random per call, not the caller's anything.
    const keys = deliveries.map((d) => (d as { idempotency_key: string }).idempotency_key);
    expect(new Set(keys).size).toBe(3);
    expect(keys.every((k) => /^[0-9a-f-]{36}$/.test(k))).toBe(true);
  });
});
