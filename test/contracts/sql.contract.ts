/**
 * What every `Sql` adapter promises (`lambdas/ports/sql.ts`), as one suite that
 * runs against each adapter: positional parameters, the common row values, the
 * JSON columns a query names, all-or-nothing transactions, and errors that carry
 * the SQLSTATE but never the statement or its values. A new adapter proves itself
 * by passing it.
 */
import { expect, it } from 'vitest';
import { describeContract, type UnderTest } from './contract.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { DatabaseError } from '../../lambdas/storage/database-error.ts';

export interface SqlUnderTest extends UnderTest {
  readonly sql: Sql;
}

export function describeSqlContract(adapter: string, open: () => Promise<SqlUnderTest>): void {
  const prepared = async () => {
    const subject = await open();
    await subject.sql.query('CREATE TABLE IF NOT EXISTS contract_items (id integer PRIMARY KEY, label text NOT NULL, tags jsonb)');
    return subject;
  };
  describeContract('Sql', adapter, prepared, (subject) => {
    const sql = () => subject().sql;
    const labels = async () => (await sql().query<{ label: string }>('SELECT label FROM contract_items ORDER BY id')).map((r) => r.label);

    it('binds positional parameters of every scalar type, literally', async () => {
      const tricky = `it's "quoted" -- not a comment; $1 stays`;
      const [row] = await sql().query('SELECT $1::text AS s, $2::int AS i, $3::float8 AS f, $4::boolean AS b, $5::text IS NULL AS n', [
        tricky,
        42,
        2.5,
        true,
        null,
      ]);
      expect(row).toEqual({ s: tricky, i: 42, f: 2.5, b: true, n: true });
    });

    it('returns the same row values from every adapter', async () => {
      const [row] = await sql().query(
        `SELECT 7::int AS int4, 9007199254740991::bigint AS int8, 0.25::float8 AS float8, 1.50::numeric AS numeric,
                false AS bool, 'a b'::text AS text, '00000000-0000-4000-8000-000000000001'::uuid AS uuid,
                '[1,2.5,-3]'::vector AS vector, '2024-02-29'::date AS day,
                '2024-01-02 03:04:05.678901+00'::timestamptz AS at, '2024-01-02 03:04:05+00'::timestamptz AS whole,
                ARRAY['x', 'y z']::text[] AS texts, '{}'::text[] AS none, NULL::text AS nothing`,
      );
      expect(row).toEqual({
        int4: 7,
        int8: 9007199254740991,
        float8: 0.25,
        numeric: '1.50',
        bool: false,
        text: 'a b',
        uuid: '00000000-0000-4000-8000-000000000001',
        vector: '[1,2.5,-3]',
        day: '2024-02-29',
        at: '2024-01-02T03:04:05.678Z',
        whole: '2024-01-02T03:04:05.000Z',
        texts: ['x', 'y z'],
        none: [],
        nothing: null,
      });
    });

    it('parses the json and jsonb columns a query names', async () => {
      const [row] = await sql().query(
        `SELECT $1::jsonb AS object, '[1, "two", null]'::json AS list, 'null'::jsonb AS json_null, '[not json]'::text AS text`,
        [JSON.stringify({ a: [1, 'two'], b: null })],
        { json: ['object', 'list', 'json_null'] },
      );
      expect(row).toEqual({ object: { a: [1, 'two'], b: null }, list: [1, 'two', null], json_null: null, text: '[not json]' });
    });

    it('commits a transaction as a whole and returns what the work returned', async () => {
      const result = await sql().transaction(async (tx) => {
        await tx.query("INSERT INTO contract_items (id, label) VALUES (1, 'one')");
        await tx.query("INSERT INTO contract_items (id, label, tags) VALUES (2, 'two', $1::jsonb)", ['["t"]']);
        return 'done';
      });
      expect(result).toBe('done');
      expect(await labels()).toEqual(['one', 'two']);
      const [row] = await sql().query('SELECT tags FROM contract_items WHERE id = 2', [], { json: ['tags'] });
      expect(row).toEqual({ tags: ['t'] });
    });

    it('keeps nothing of a transaction whose work fails, and rethrows the failure', async () => {
      const failure = new Error('work failed');
      await expect(
        sql().transaction(async (tx) => {
          await tx.query("INSERT INTO contract_items (id, label) VALUES (3, 'three')");
          throw failure;
        }),
      ).rejects.toBe(failure);
      await expect(
        sql().transaction(async (tx) => {
          await tx.query("INSERT INTO contract_items (id, label) VALUES (4, 'four')");
          await tx.query("INSERT INTO contract_items (id, label) VALUES (1, 'duplicate')");
        }),
      ).rejects.toBeInstanceOf(DatabaseError);
      expect(await labels()).toEqual(['one', 'two']);
    });

    it('runs a nested transaction inside the open one: all of it or none of it', async () => {
      await expect(
        sql().transaction(async (tx) => {
          await tx.transaction((inner) => inner.query("INSERT INTO contract_items (id, label) VALUES (5, 'five')"));
          throw new Error('outer work failed');
        }),
      ).rejects.toThrow('outer work failed');
      expect(await labels()).toEqual(['one', 'two']);
    });

    it('fails with the SQLSTATE only: never the statement or the values it was given', async () => {
      const secret = 'kb_live_do-not-log-this-value';
      const error = await sql().query('INSERT INTO contract_items (id, label) VALUES ($1, $2)', [1, secret]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DatabaseError);
      expect((error as DatabaseError).code).toBe('23505');
      const text = `${(error as Error).message} ${JSON.stringify(error)} ${String((error as Error).cause ?? '')}`;
      expect(text).not.toContain(secret);
      expect(text).not.toContain('INSERT');
    });
  });
}
