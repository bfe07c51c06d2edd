/**
 * What the Data API adapter sends and reads, without the service: `$n` rewritten
 * to named parameters outside literals and comments, typed values for only the
 * parameters a statement uses, rows decoded to the port's form, and errors that
 * keep the SQLSTATE and the error name but nothing of the message.
 */
import { describe, expect, it } from 'vitest';
import { DataApiError, decodeRecords, toDatabaseError, toDataApiValue, toNamedParameters, toStatement } from '../../lambdas/storage/data-api-encoding.ts';
import { DatabaseError } from '../../lambdas/storage/database-error.ts';

describe('parameters', () => {
  it('rewrites $n outside literals, quoted identifiers, dollar quotes and comments', () => {
    const text = `SELECT '$1 it''s' AS "a$2", E'\\'$3' AS b, $$ $4 $$ AS c, $tag$ $5 $tag$ AS d, $1::uuid, x$6 -- $7\n /* $8 */ FROM t WHERE y = $10`;
    expect(toNamedParameters(text)).toEqual({
      sql: `SELECT '$1 it''s' AS "a$2", E'\\'$3' AS b, $$ $4 $$ AS c, $tag$ $5 $tag$ AS d, :p1::uuid, x$6 -- $7\n /* $8 */ FROM t WHERE y = :p10`,
      used: [1, 10],
    });
  });

  it('types each value as the service binds it', () => {
    expect(toDataApiValue('text')).toEqual({ stringValue: 'text' });
    expect(toDataApiValue(42)).toEqual({ longValue: 42 });
    expect(toDataApiValue(2.5)).toEqual({ doubleValue: 2.5 });
    expect(toDataApiValue(false)).toEqual({ booleanValue: false });
    expect(toDataApiValue(null)).toEqual({ isNull: true });
    expect(toDataApiValue(undefined)).toEqual({ isNull: true });
    expect(() => toDataApiValue({} as never)).toThrow(TypeError);
  });

  it('sends only the parameters a statement uses, and refuses a placeholder without a value', () => {
    expect(toStatement('SELECT $2::text, $2::text', ['unused', 'used'])).toEqual({
      sql: 'SELECT :p2::text, :p2::text',
      parameters: [{ name: 'p2', value: { stringValue: 'used' } }],
    });
    for (const text of ['SELECT $3::text', 'SELECT $0::text']) {
      const error = (() => {
        try {
          toStatement(text, ['a']);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(DataApiError);
      expect((error as DataApiError).code).toBe('42P02');
    }
  });
});

describe('rows', () => {
  it('reads no records as no rows', () => {
    expect(decodeRecords(undefined)).toEqual([]);
    expect(decodeRecords('')).toEqual([]);
  });

  it('gives timestamps as ISO-8601 UTC and parses only the JSON columns a query names', () => {
    const formatted = JSON.stringify([{ t: '2024-01-02 03:04:05.678901', doc: '{"a":1}', text: '{"a":1}', n: 7 }]);
    expect(decodeRecords(formatted, { json: ['doc'] })).toEqual([{ t: '2024-01-02T03:04:05.678Z', doc: { a: 1 }, text: '{"a":1}', n: 7 }]);
  });
});

describe('errors', () => {
  it('keep the SQLSTATE and the error name, and none of the message', () => {
    const service = Object.assign(new Error('ERROR: duplicate key value violates unique constraint; Key (value)=(secret); SQLState: 23505'), {
      name: 'BadRequestException',
    });
    const error = toDatabaseError(service);
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({ code: '23505', errorType: 'BadRequestException' });
    expect(error.message).toBe('Database error (SQLSTATE 23505)');
    expect(JSON.stringify([String(error), Object.entries(error)])).not.toContain('secret');
  });

  it('name the Data API error when there is no SQLSTATE, and drop a name that is not a plain identifier', () => {
    expect(toDatabaseError(Object.assign(new Error('no'), { name: 'ForbiddenException' })).message).toBe('Database error (Data API ForbiddenException)');
    expect(toDatabaseError(Object.assign(new Error('no'), { name: 'Weird name: secret' })).errorType).toBeUndefined();
    expect(toDatabaseError('not an error')).toMatchObject({ code: undefined, errorType: undefined });
    const already = new DataApiError('42P02', undefined);
    expect(toDatabaseError(already)).toBe(already);
  });
});
