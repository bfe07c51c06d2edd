/**
 * DynamoQuotaStore against an in-process DynamoDB (dynalite): the daily limit
 * holds under concurrency, counters are per subject and per day, and every
 * counter carries a TTL so DynamoDB can delete past days.
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
  it('lets exactly `limit` of 50 concurrent calls through, each with a distinct remaining count', async () => {
    // Act
    const decisions = await Promise.all(Array.from({ length: 50 }, () => store.consume('key:alpha', '2025-03-14', 20)));

    // Assess
    const allowed = decisions.filter((decision) => decision.allowed);
    expect(allowed).toHaveLength(20);
    expect(allowed.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(decisions.filter((decision) => !decision.allowed).every((decision) => decision.remaining === 0)).toBe(true);
    expect(await store.used('key:alpha', '2025-03-14')).toBe(20);
    expect(await store.consume('key:alpha', '2025-03-14', 20)).toEqual({ allowed: false, remaining: 0 });
    expect(await store.used('key:alpha', '2025-03-14')).toBe(20);
  });

  it('counts each day separately', async () => {
    // Act
    const first = await store.consume('key:days', '2025-03-14', 3);
    await store.consume('key:days', '2025-03-14', 3);
    const nextDay = await store.consume('key:days', '2025-03-15', 3);

    // Assess
    expect(first).toEqual({ allowed: true, remaining: 2 });
    expect(nextDay).toEqual({ allowed: true, remaining: 2 });
    expect(await store.used('key:days', '2025-03-14')).toBe(2);
    expect(await store.used('key:days', '2025-03-15')).toBe(1);
  });

  it('counts each subject separately', async () => {
    // Act
    await store.consume('guest:one', '2025-03-14', 1);
    const refused = await store.consume('guest:one', '2025-03-14', 1);
    const other = await store.consume('guest:two', '2025-03-14', 1);

    // Assess
    expect(refused).toEqual({ allowed: false, remaining: 0 });
    expect(other).toEqual({ allowed: true, remaining: 0 });
    expect(await store.used('guest:one', '2025-03-14')).toBe(1);
    expect(await store.used('guest:two', '2025-03-14')).toBe(1);
  });

  it('refuses everything at limit 0 without creating a counter', async () => {
    // Act
    const decision = await store.consume('key:zero', '2025-03-14', 0);

    // Assess
    expect(decision).toEqual({ allowed: false, remaining: 0 });
    expect(await store.used('key:zero', '2025-03-14')).toBe(0);
  });

  it('reads 0 for a subject that has made no calls', async () => {
    expect(await store.used('key:never', '2025-03-14')).toBe(0);
  });

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
