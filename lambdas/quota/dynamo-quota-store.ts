/**
 * `QuotaStore` on a DynamoDB table: the hosted counterpart of `SqlQuotaStore`.
 *
 * What it owns:
 * - The item layout. One item per subject and UTC day, partition key
 *   `pk = "<subject>#<YYYY-MM-DD>"` (the day has a fixed length at the end, so a
 *   `#` inside the subject cannot make two keys collide), a number `used`, and
 *   `expires_at`, a TTL attribute in epoch seconds so DynamoDB deletes past days
 *   by itself (no prune job).
 * - Atomicity. `consume` is ONE conditional `UpdateItem`
 *   (`ADD used :one` only if `used` is absent or below the limit), so the check
 *   and the count happen together and N parallel calls against a limit L succeed
 *   exactly min(N, L) times. A `ConditionalCheckFailedException` means refused.
 *
 * What it does not do:
 * - Decide policy (limits, what counts as a call, which day it is); callers pass
 *   those in, as with every `QuotaStore`.
 * - Create the table or enable TTL; the CDK stack does, using `PARTITION_KEY` and
 *   `EXPIRES_AT_ATTRIBUTE` from here so both sides agree on the names.
 * - Retry refused calls or swallow SDK errors: those propagate to the caller.
 */
import {
  DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import type { QuotaDecision, QuotaStore } from '../ports/quota-store.ts';

/** The table's partition key (type S). */
export const PARTITION_KEY = 'pk';
/** The table's TTL attribute (epoch seconds). */
export const EXPIRES_AT_ATTRIBUTE = 'expires_at';
const USED_ATTRIBUTE = 'used';

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface DynamoQuotaStoreOptions {
  client?: DynamoDBClient;
  tableName: string;
}

/** The partition key value of one subject's counter on one UTC day. */
export function quotaKey(subject: string, day: string): string {
  return `${subject}#${day}`;
}

/**
 * When a day's counter may be deleted: the end of that UTC day plus one more day,
 * in epoch seconds. The extra day keeps `used()` meaningful around midnight and
 * covers DynamoDB's TTL, which deletes lazily anyway.
 */
export function quotaExpiresAt(day: string): number {
  const match = DAY_PATTERN.exec(day);
  const endOfDay = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + 1) : Number.NaN;
  if (!Number.isFinite(endOfDay) || new Date(endOfDay - DAY_MS).toISOString().slice(0, 10) !== day) {
    throw new Error('Quota day must be a valid UTC date in YYYY-MM-DD form.');
  }
  return Math.floor((endOfDay + DAY_MS) / 1000);
}

export class DynamoQuotaStore implements QuotaStore {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;

  constructor(options: DynamoQuotaStoreOptions) {
    this.client = options.client ?? new DynamoDBClient({});
    this.tableName = options.tableName;
  }

  async consume(subject: string, day: string, limit: number): Promise<QuotaDecision> {
    if (!(limit > 0)) return { allowed: false, remaining: 0 };
    const expiresAt = quotaExpiresAt(day);
    try {
      const output = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [PARTITION_KEY]: { S: quotaKey(subject, day) } },
          UpdateExpression: 'ADD #used :one SET #expires = if_not_exists(#expires, :exp)',
          ConditionExpression: 'attribute_not_exists(#used) OR #used < :limit',
          ExpressionAttributeNames: { '#used': USED_ATTRIBUTE, '#expires': EXPIRES_AT_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':one': { N: '1' },
            ':exp': { N: String(expiresAt) },
            ':limit': { N: String(limit) },
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const used = readNumber(output.Attributes?.[USED_ATTRIBUTE]);
      if (used === undefined) throw new Error('DynamoDB did not return the updated quota counter.');
      return { allowed: true, remaining: Math.max(0, limit - used) };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { allowed: false, remaining: 0 };
      throw error;
    }
  }

  async used(subject: string, day: string): Promise<number> {
    const output = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [PARTITION_KEY]: { S: quotaKey(subject, day) } },
        ProjectionExpression: '#used',
        ExpressionAttributeNames: { '#used': USED_ATTRIBUTE },
        ConsistentRead: true,
      }),
    );
    return readNumber(output.Item?.[USED_ATTRIBUTE]) ?? 0;
  }
}

function readNumber(value: AttributeValue | undefined): number | undefined {
  if (value?.N === undefined) return undefined;
  const number = Number(value.N);
  return Number.isFinite(number) ? number : undefined;
}

function isConditionalCheckFailed(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'ConditionalCheckFailedException';
}
