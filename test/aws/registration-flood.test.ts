/**
 * A flood of OAuth client registrations from many addresses against the AWS
 * gateway handler, each address under its own limit: past the server-wide hourly
 * count the gateway refuses from DynamoDB alone, so the flood writes no more rows
 * and never reaches (or wakes) Aurora again that hour. The Data API stand-in
 * records every operation; the quota table is dynalite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { startAwsBackends, type AwsBackends } from '../support/aws-backends.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import { createGatewayHandler, gatewayDeps, gatewayOAuthRoutes } from '../../lambdas/aws/gateway.ts';
import { GATEWAY_HOST, stageFetch } from '../support/api-gateway-fetch.ts';

const TOTAL_PER_HOUR = 4;
const secrets = mockClient(SecretsManagerClient);
let backends: AwsBackends;
let handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
const lines: string[] = [];

beforeAll(async () => {
  backends = await startAwsBackends({ embeddings: 'none', oauthRegistrationsTotalPerHour: String(TOTAL_PER_HOUR) });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: '9a'.repeat(32) }) });
  const deps = gatewayDeps(process.env, createLogger((line) => lines.push(line)));
  handler = createGatewayHandler(deps, gatewayOAuthRoutes(process.env, deps));
}, 300_000);

afterAll(async () => {
  secrets.restore();
  await backends?.close();
});

describe('a registration flood from many addresses on AWS', () => {
  it('is refused from DynamoDB past the server-wide hourly count: 503 with Retry-After, no Data API call, no row', async () => {
    const register = (address: string) =>
      stageFetch(handler, { sourceIp: address, host: GATEWAY_HOST })(`https://${GATEWAY_HOST}/v1/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:33418/callback'], client_name: 'flood' }),
      });
    for (let i = 0; i < TOTAL_PER_HOUR; i++) expect((await register(`203.0.113.${i + 1}`)).status).toBe(201);
    const rows = async () => Number((await backends.sql.query<{ n: string }>('SELECT count(*)::text AS n FROM oauth_clients'))[0]!.n);
    expect(await rows()).toBe(TOTAL_PER_HOUR);

    const dataApiBefore = backends.fixture.operations.length;
    for (let i = 0; i < 20; i++) {
      const refused = await register(`198.51.100.${i + 1}`);
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: string }).error).toBe('temporarily_unavailable');
    }
    expect(backends.fixture.operations.length).toBe(dataApiBefore);
    expect(await rows()).toBe(TOTAL_PER_HOUR);
    expect(lines.filter((line) => line.includes('"security_event":"registration_cap"')).length).toBe(20);
  });
});
