/**
 * What only the DynamoDB quota store owns, against dynalite: the TTL that lets
 * DynamoDB delete past days, and refusing a malformed day. Counting, the limit
 * under racing calls and per-subject, per-day counters are the `QuotaStore`
 * contract (`test/contracts/quota-store.test.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoQuotaStore, EXPIRES_AT_ATTRIBUTE, PARTITION_KEY } from '../../lambdas/quota/dynamo-quota-store.ts';
import { createQuotaTable, startDynalite, type Dynalite } from '../support/dynalite.ts';

const TABLE = 'quota';
let dynamo: Dynalite;
let store: DynamoQuotaStore;

beforeAll(async () => {
  dynamo = await startDynalite();
  await createQuotaTable(dynamo.client, TABLE);
  store = new DynamoQuotaStore({ client: dynamo.client, tableName: TABLE });
});

afterAll(async () => {
  await dynamo?.close();
});

describe('DynamoQuotaStore', () => {
  it('stores an expires_at TTL one day after the end of the counted UTC day', async () => {
    // Act
    await store.consume('key:ttl', '2025-03-14', 5);
    const { Item } = await dynamo.client.send(
      new GetItemCommand({ TableName: TABLE, Key: { [PARTITION_KEY]: { S: 'key:ttl#2025-03-14' } }, ConsistentRead: true }),
    );

    // Assess
    const expiresAt = Number(Item?.[EXPIRES_AT_ATTRIBUTE]?.N);
    const endOfDay = Date.UTC(2025, 2, 15) / 1000;
    expect(expiresAt).toBeGreaterThan(endOfDay);
    expect(expiresAt).toBe(endOfDay + 86_400);
  });

  it('rejects a malformed day without echoing it', async () => {
    await expect(store.consume('key:bad', '2025-02-30', 5)).rejects.toThrow(/YYYY-MM-DD/);
    await expect(store.consume('key:bad', 'yesterday', 5)).rejects.not.toThrow(/yesterday/);
  });
});
