/**
 * An in-process DynamoDB (dynalite, in-memory LevelDB) on 127.0.0.1 with an
 * ephemeral port, for integration tests of the DynamoDB adapters. Nothing leaves
 * the machine and no AWS credentials are needed.
 *
 * Owns starting and stopping the server and creating the quota table the way the
 * stack does (`pk` string hash key, on-demand). Does not enable TTL: dynalite
 * does not delete expired items, so tests check `expires_at` values instead.
 */
import { listen } from '../../lambdas/local/listen.ts';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { PARTITION_KEY } from '../../lambdas/quota/dynamo-quota-store.ts';

// dynalite ships no type declarations; require it with the one signature we use.
const dynalite = createRequire(import.meta.url)('dynalite') as (options?: { createTableMs?: number }) => Server;

export interface Dynalite {
  endpoint: string;
  client: DynamoDBClient;
  close(): Promise<void>;
}

export async function startDynalite(): Promise<Dynalite> {
  const server = dynalite({ createTableMs: 0 });
  await listen(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  return {
    endpoint,
    client,
    async close() {
      client.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** Creates the quota table (`pk` string hash key, PAY_PER_REQUEST) and waits until it is ACTIVE. */
export async function createQuotaTable(client: DynamoDBClient, name: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: PARTITION_KEY, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: PARTITION_KEY, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`Table ${name} did not become ACTIVE within 10 s.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
