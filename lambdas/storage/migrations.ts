/**
 * Applies the numbered SQL files in `schema/` in order, each once, under an
 * advisory lock so that two starters (two Lambdas, a CLI and a server) never race.
 * Each file is itself idempotent, so a run interrupted between a file and its
 * bookkeeping row is safe to repeat.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { postgreSplitterOptions, splitQuery } from 'dbgate-query-splitter';
import type { Sql } from '../ports/sql.ts';

export const SCHEMA_DIR = fileURLToPath(new URL('../../schema/', import.meta.url));

/** Arbitrary constant shared by every chatctx process: "chatctx" in ASCII. */
const MIGRATION_LOCK_KEY = 6_363_686_174_637_478;

/** Migration files: `NNN_name.sql`, applied in name order. The stack hashes the same selection. */
export const MIGRATION_FILE_PATTERN = /^\d{3}_[a-z0-9_]+\.sql$/;

export interface Migration {
  readonly version: string;
  readonly sql: string;
}

export async function loadMigrations(dir: string = SCHEMA_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => MIGRATION_FILE_PATTERN.test(f)).sort();
  return Promise.all(files.map(async (file) => ({ version: file.replace(/\.sql$/, ''), sql: await readFile(dir + file, 'utf8') })));
}

/** Returns the versions applied by this call (empty when already up to date). */
export async function migrate(sql: Sql, migrations?: readonly Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  return sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const migration of all) {
      if (done.has(migration.version)) continue;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
    return applied;
  });
}

/**
 * Splits a migration into statements (the Data API runs one statement per call).
 * A Postgres-aware splitter: semicolons inside quoted strings, dollar-quoted
 * function bodies and comments do not end a statement. Pieces that are only
 * comments are dropped.
 */
export function splitStatements(script: string): string[] {
  return (splitQuery(script, postgreSplitterOptions) as string[])
    .map((statement) => statement.trim())
    .filter((statement) => statement.replace(/--[^\n]*/g, '').trim().length > 0);
}
