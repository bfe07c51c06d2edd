/**
 * Telling a uuid from a slug, in code and in SQL: a well-formed uuid in any case
 * is the id Postgres prints, anything else names no uuid row, and the pattern the
 * statements use agrees with the code on every sample, so a slug never reaches a
 * `::uuid` cast (which would fail the whole statement).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { SQL_UUID_PATTERN, asUuid } from '../../lambdas/storage/uuid-text.ts';

const SAMPLES = [
  '0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a',
  '0B7E3C1A-5D2F-4E8B-9A6C-1F2E3D4C5B6A',
  '00000000-0000-0000-0000-000000000000',
  'use-stable-keys-for-dynamic-react-lists',
  '0b7e3c1a5d2f4e8b9a6c1f2e3d4c5b6a',
  '{0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a}',
  '0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6',
  '0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a0',
  '0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6g',
  '0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a\n',
  ' 0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a',
  '',
];

let sql: PgliteSql;

beforeAll(async () => {
  sql = await PgliteSql.open();
}, 300_000);
afterAll(() => sql?.close());

describe('asUuid', () => {
  it('gives a uuid in any case as Postgres prints it', async () => {
    const upper = '0B7E3C1A-5D2F-4E8B-9A6C-1F2E3D4C5B6A';
    const [row] = await sql.query<{ id: string }>('SELECT $1::uuid::text AS id', [upper]);
    expect(asUuid(upper)).toBe(row!.id);
    expect(asUuid(upper)).toBe('0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a');
  });

  it('gives null for a slug and for every near miss of a uuid', () => {
    expect(SAMPLES.slice(3).map(asUuid)).toEqual(Array(SAMPLES.length - 3).fill(null));
  });

  it('agrees with the SQL pattern on every sample', async () => {
    const inSql = [];
    for (const sample of SAMPLES) inSql.push((await sql.query<{ matches: boolean }>(`SELECT $1::text ~ '${SQL_UUID_PATTERN}' AS matches`, [sample]))[0]!.matches);
    expect(inSql).toEqual(SAMPLES.map((sample) => asUuid(sample) !== null));
    expect(inSql.filter(Boolean)).toHaveLength(3);
  });
});
