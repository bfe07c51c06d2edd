/**
 * Migrations reach the Data API one statement at a time: a function body or a
 * string with semicolons in it must stay whole.
 */
import { describe, expect, it } from 'vitest';
import { splitStatements } from '../../lambdas/storage/migrations.ts';

describe('splitStatements', () => {
  it('keeps dollar-quoted bodies and quoted strings whole, and drops comment-only pieces', () => {
    const script = [
      "-- a comment; with a semicolon",
      "CREATE TABLE t (note text DEFAULT 'a;b');",
      'CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $fn$',
      'BEGIN',
      "  PERFORM 1; -- inside; the body",
      '  RETURN 2;',
      'END',
      '$fn$;',
      'SELECT $$x;y$$;',
      '-- trailing comment;',
    ].join('\n');
    const statements = splitStatements(script);
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^CREATE TABLE t \(note text DEFAULT 'a;b'\)$/m);
    expect(statements[1]).toMatch(/^CREATE FUNCTION f\(\)[\s\S]*RETURN 2;\nEND\n\$fn\$$/);
    expect(statements[2]).toBe('SELECT $$x;y$$');
  });
});
