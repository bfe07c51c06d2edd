/**
 * The shared OAuth security suite (`test/support/oauth-security-suite.ts`) against
 * the AWS gateway handler, offline: API Gateway events through the stage on a
 * custom domain (client addresses as API Gateway's `sourceIp`), the Data API
 * adapter over PGlite, the per-address limits counted in DynamoDB (dynalite), the
 * pepper from a mocked Secrets Manager. Keys are cached for a minute, as deployed,
 * so a revoked token family is refused at once only because the handler drops its
 * cache when it revokes one.
 */
import { afterAll, beforeAll } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { startAwsBackends, type AwsBackends } from '../support/aws-backends.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import { createGatewayHandler, gatewayDeps, gatewayOAuthRoutes } from '../../lambdas/aws/gateway.ts';
import { GATEWAY_HOST, stageFetch } from '../support/api-gateway-fetch.ts';
import { describeOAuthSecurity } from '../support/oauth-security-suite.ts';

const PEPPER_HEX = 'ef'.repeat(32);
const REGISTRATIONS_PER_HOUR = 3;
const PENDING_CLIENTS_MAX = 8;
const CUSTOM_HOST = 'mcp.example.com';

const secrets = mockClient(SecretsManagerClient);
let backends: AwsBackends;
let handler: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
let keys: KeyRepository;
const lines: string[] = [];

beforeAll(async () => {
  backends = await startAwsBackends({ embeddings: 'none', keyCacheSeconds: '60' });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: PEPPER_HEX }) });
  keys = new KeyRepository(backends.sql, { pepper: async () => Buffer.from(PEPPER_HEX, 'hex') });
  const env = { ...process.env, CHATCTX_OAUTH_REGISTRATIONS_PER_HOUR: String(REGISTRATIONS_PER_HOUR), CHATCTX_OAUTH_PENDING_CLIENTS_MAX: String(PENDING_CLIENTS_MAX) };
  const deps = gatewayDeps(env, createLogger((line) => lines.push(line)));
  handler = createGatewayHandler(deps, gatewayOAuthRoutes(env, deps));
}, 300_000);

afterAll(async () => {
  secrets.restore();
  await backends?.close();
});

describeOAuthSecurity('AWS gateway', () => ({
  mcpUrl: `https://${CUSTOM_HOST}/mcp`,
  // The API's own host keeps the stage in its URLs: the same function, another resource URL.
  otherMcpUrl: `https://${GATEWAY_HOST}/v1/mcp`,
  fetchFrom: (address) => (input, init) => {
    const host = new URL(input instanceof Request ? input.url : String(input)).host;
    return stageFetch(handler, { sourceIp: address, host })(input, init);
  },
  createKey: (name) => keys.create(name, null),
  logs: () => lines,
  registrationsPerHour: REGISTRATIONS_PER_HOUR,
  pendingClientsMax: PENDING_CLIENTS_MAX,
}));
