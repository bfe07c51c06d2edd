/**
 * `chatctx --remote FUNCTION records import` with more records than one synchronous
 * Invoke can carry: the chunks, in order and each under the limit, reach the real
 * admin entry (the Lambda service mocked at the SDK client) over the Data API
 * adapter against the PGlite-backed fixture; nothing is lost, totals add up,
 * overrides reach the chunk whose records need them, and a failure names what landed.
 * The chunk limit is lowered so that a few dozen records make several chunks.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import type { Context } from 'aws-lambda';
import { startDataApiFixture, type DataApiFixture, adminFunctionEnv } from '../support/data-api-fixture.ts';
import { reviewedRecord } from '../support/records.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { MAX_CHUNK_BYTES, chunkImport, runRemoteCommand } from '../../lambdas/aws/remote-import.ts';
import type { ImportResult } from '../../lambdas/admin/admin-operations.ts';
import { AppError, ValidationError } from '../../lambdas/errors/app-error.ts';

const ADMIN = 'fn-admin';
const LIMIT = 12_000;
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
let fixture: DataApiFixture;
const payloads: { op: string; bytes: number; records: number; overrides: string[] }[] = [];
const context = { functionName: 'admin', awsRequestId: 'req', getRemainingTimeInMillis: () => 900_000 } as unknown as Context;

const remote = (command: Record<string, unknown>, limits: { maxChunkBytes?: number; maxChunkRecords?: number } = { maxChunkBytes: LIMIT }) =>
  runRemoteCommand(ADMIN, command as never, { client: new LambdaClient({ region: 'us-east-1' }), ...limits });

const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => reviewedRecord(`${prefix}-${String(i).padStart(3, '0')}`));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  fixture = await startDataApiFixture();
  Object.assign(process.env, adminFunctionEnv(fixture));
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: 'ef'.repeat(32) }) });
  await migrate(new DataApiSql({ client: new RDSDataClient({}), resourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx', secretArn: 'x', database: 'chatctx' }));
  const admin = (await import('../../lambdas/handlers/admin.ts')).handler as unknown as (event: unknown, context: Context) => Promise<unknown>;
  lambda.on(InvokeCommand).callsFake(async (input: { FunctionName: string; Payload: Uint8Array }) => {
    const command = JSON.parse(new TextDecoder().decode(input.Payload));
    payloads.push({ op: command.op, bytes: input.Payload.byteLength, records: command.records?.length ?? 0, overrides: (command.overrides ?? []).map((o: { gate: string }) => o.gate) });
    return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(await admin(command, context))) };
  });
}, 300_000);

beforeEach(() => {
  payloads.length = 0;
});

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await fixture?.close();
});

const stored = async (prefix: string) =>
  ((await remote({ op: 'records.list' })) as { slug: string }[]).map((r) => r.slug).filter((slug) => slug.startsWith(prefix)).sort();

describe('remote import in chunks', () => {
  it('splits a large import into ordered chunks under the limit, and loses nothing', async () => {
    // Prepare
    const records = batch('bulk', 40);

    // Act
    const result = (await remote({ op: 'records.import', records, where: records.map((_, i) => `bulk.jsonl:${i + 1}`), approve: false })) as ImportResult;

    // Assess
    const imports = payloads.filter((p) => p.op === 'records.import');
    expect(imports.length).toBeGreaterThan(2);
    expect(Math.max(...imports.map((p) => p.bytes))).toBeLessThanOrEqual(LIMIT);
    expect(imports.reduce((sum, p) => sum + p.records, 0)).toBe(40);
    expect(result).toMatchObject({ created: 40, updated: 0, unchanged: 0, candidates: 40 });
    expect(result.slugs).toEqual(records.map((r) => r.slug));
    expect(await stored('bulk-')).toEqual(records.map((r) => r.slug as string).sort());
  });

  it('caps the records per chunk as well as the bytes', async () => {
    const records = batch('capped', 7);
    await remote({ op: 'records.import', records, approve: false }, { maxChunkRecords: 3 });
    expect(payloads.map((p) => p.records)).toEqual([3, 3, 1]);
    expect(await stored('capped-')).toHaveLength(7);
  });

  it('refuses a record too large for any chunk by name, before sending anything', async () => {
    const records = [...batch('small', 2), reviewedRecord('huge-record', { rationale: 'word '.repeat(4_000) })];
    const error = await rejection(remote({ op: 'records.import', records, where: ['a.json', 'b.json', 'huge.json'], approve: false }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^huge\.json is \d+ bytes as JSON, more than one remote import request can carry \(12000 bytes/);
    expect(payloads).toEqual([]);
    expect(await stored('small-')).toEqual([]);
  });

  it('gives each chunk the overrides its own records need', async () => {
    const records = batch('gated', 24);
    records[20] = reviewedRecord('gated-old-review', { reviewed_at: '2009-01-01' });
    const reason = 'Re-read the sources today; nothing changed since.';

    const result = (await remote({ op: 'records.import', records, approve: true, reviewer: 'owner', overrides: [{ gate: 'freshness', reason }] })) as ImportResult;

    expect(result.approved).toBe(24);
    const imports = payloads.filter((p) => p.op === 'records.import');
    expect(imports.filter((p) => p.overrides.includes('freshness'))).toHaveLength(1);
    const shown = (await remote({ op: 'records.show', id: 'gated-old-review' })) as { approval: unknown };
    expect(shown.approval).toMatchObject({ approved_by: 'owner', overrides: [{ gate: 'freshness', reason }] });
  });

  it('says which records landed when a later chunk fails', async () => {
    const records = batch('partial', 30);
    records[29] = reviewedRecord('partial-bad-range', { applies_to: [{ kind: 'database', name: 'PostgreSQL', version_constraint: 'not a range!!' }] });

    const error = await rejection(remote({ op: 'records.import', records, approve: true, reviewer: 'owner' }));

    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'validation_error' });
    const { chunk, chunks, imported_records: imported } = (error as AppError).details as { chunk: number; chunks: number; imported_records: number };
    expect(chunk).toBe(chunks);
    expect((error as Error).message).toContain(`Records 1–${imported} (chunks 1–${chunk - 1}) were imported and stay.`);
    expect(await stored('partial-')).toEqual(records.slice(0, imported).map((r) => r.slug as string).sort());
  });
});

describe('chunkImport at the real limit', () => {
  it('keeps every chunk of a 12 MB import under 5 MB, in order, without losing a record', () => {
    const big = 'x'.repeat(3_000);
    const records = Array.from({ length: 4_000 }, (_, i) => ({ slug: `r-${i}`, rationale: big }));
    const command = { op: 'records.import' as const, records, approve: false };
    const chunks = chunkImport(command);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) {
      expect(Buffer.byteLength(JSON.stringify({ ...command, records: records.slice(chunk.start, chunk.end) }))).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
    }
    expect(chunks.flatMap((c) => records.slice(c.start, c.end))).toEqual(records);
  });
});
