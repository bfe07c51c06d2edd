/**
 * Both MCP eras through the real gateway Lambda entry (`lambdas/handlers/gateway.ts`)
 * as API Gateway invokes it: the v2 SDK client in its 2026-07-28 and legacy modes,
 * the v1 SDK client, and raw 2026 requests. Underneath: the Data API adapter over
 * PGlite, DynamoDB (dynalite) for quotas, and each tool's own Lambda entry behind
 * the mocked Lambda service.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { startDataApiFixture } from '../support/data-api-fixture.ts';
import { createQuotaTable, startDynalite } from '../support/dynalite.ts';
import { GATEWAY_URL, gatewayFetch } from '../support/api-gateway-fetch.ts';
import { describeDualEra } from '../support/dual-era-suite.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { SETTINGS, readSetting } from '../../lambdas/config/settings.ts';

const PEPPER_HEX = 'ef'.repeat(32);
const FUNCTIONS = { search_knowledge: 'fn-search', get_guidance: 'fn-guidance', submit_feedback: 'fn-feedback' } as const;
const GUEST_LIMIT = 3;

let fixture: Awaited<ReturnType<typeof startDataApiFixture>>;
let dynamo: Awaited<ReturnType<typeof startDynalite>>;
let entry: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let apiKey: string;
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
const context = { functionName: 'gateway', awsRequestId: 'req', getRemainingTimeInMillis: () => 29_000 } as unknown as Context;

beforeAll(async () => {
  fixture = await startDataApiFixture();
  dynamo = await startDynalite();
  await createQuotaTable(dynamo.client, 'quota');
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_RDS_DATA: fixture.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    POWERTOOLS_METRICS_DISABLED: 'true',
    [SETTINGS.dbClusterArn.env]: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx',
    [SETTINGS.dbSecretArn.env]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
    [SETTINGS.dbName.env]: 'chatctx',
    [SETTINGS.quotaTableName.env]: 'quota',
    [SETTINGS.pepperSecretArn.env]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:pepper',
    [SETTINGS.searchKnowledgeFunction.env]: FUNCTIONS.search_knowledge,
    [SETTINGS.getGuidanceFunction.env]: FUNCTIONS.get_guidance,
    [SETTINGS.submitFeedbackFunction.env]: FUNCTIONS.submit_feedback,
    [SETTINGS.guestDailyLimit.env]: String(GUEST_LIMIT),
    [SETTINGS.allowedHosts.env]: '*',
    [SETTINGS.allowedOrigins.env]: 'https://console.example',
    [SETTINGS.embeddings.env]: 'none',
  });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  const sql = new DataApiSql({
    client: new RDSDataClient({}),
    resourceArn: readSetting(process.env, 'dbClusterArn'),
    secretArn: readSetting(process.env, 'dbSecretArn'),
    database: 'chatctx',
  });
  await migrate(sql);
  await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  apiKey = (await new KeyRepository(sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') }).create('dual era', null)).key;

  const tools = {
    [FUNCTIONS.search_knowledge]: (await import('../../lambdas/handlers/search-knowledge.ts')).handler,
    [FUNCTIONS.get_guidance]: (await import('../../lambdas/handlers/get-guidance.ts')).handler,
    [FUNCTIONS.submit_feedback]: (await import('../../lambdas/handlers/submit-feedback.ts')).handler,
  } as Record<string, (event: unknown, context: Context) => Promise<unknown>>;
  lambda.on(InvokeCommand).callsFake(async (input: { FunctionName: string; Payload: Uint8Array }) => {
    const result = await tools[input.FunctionName]!(JSON.parse(new TextDecoder().decode(input.Payload)), context);
    return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(result)) };
  });
  entry = (await import('../../lambdas/handlers/gateway.ts')).handler as unknown as typeof entry;
}, 120_000);

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await dynamo?.close();
  await fixture?.close();
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
