/**
 * Both MCP eras through the real gateway Lambda entry (`lambdas/handlers/gateway.ts`)
 * as API Gateway invokes it: the v2 SDK client in its 2026-07-28 and legacy modes,
 * the v1 SDK client, and raw 2026 requests. Underneath: the Data API adapter over
 * PGlite, DynamoDB (dynalite) for quotas, and each tool's own Lambda entry behind
 * the mocked Lambda service.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { TOOL_FUNCTIONS, startAwsBackends, type AwsBackends, answerInvokes, toolEntries } from '../support/aws-backends.ts';
import { GATEWAY_URL, gatewayFetch } from '../support/api-gateway-fetch.ts';
import { describeDualEra } from '../support/dual-era-suite.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';

const PEPPER_HEX = 'ef'.repeat(32);
const FUNCTIONS = TOOL_FUNCTIONS;
const GUEST_LIMIT = 3;

let backends: AwsBackends;
let entry: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let apiKey: string;
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
const context = { functionName: 'gateway', awsRequestId: 'req', getRemainingTimeInMillis: () => 29_000 } as unknown as Context;

beforeAll(async () => {
  backends = await startAwsBackends({ guestDailyLimit: String(GUEST_LIMIT), allowedOrigins: 'https://console.example', embeddings: 'none' });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  const sql = backends.sql;
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  apiKey = (await new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') }).create('dual era', null)).key;

  answerInvokes(lambda, await toolEntries(), () => context);
  entry = (await import('../../lambdas/handlers/gateway.ts')).handler as unknown as typeof entry;
}, 300_000);

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await backends?.close();
});

describeDualEra('AWS gateway Lambda', () => ({
  url: GATEWAY_URL,
  fetchFrom: (address) => gatewayFetch((event) => entry(event, context), address).fetch,
  key: () => apiKey,
  guestLimit: GUEST_LIMIT,
}));

it('lets an allowed browser origin send the 2026 standard headers', async () => {
  const fetch = gatewayFetch((event) => entry(event, context), '203.0.113.30').fetch;
  const preflight = await fetch(GATEWAY_URL, {
    method: 'OPTIONS',
    headers: { Origin: 'https://console.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'mcp-method, mcp-name' },
  });
  expect(preflight.status).toBe(204);
  const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase();
  for (const header of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) expect(allowed).toContain(header);
});
