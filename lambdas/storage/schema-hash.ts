/**
 * The content hash of a schema: what the stack passes to the migrations custom
 * resource as `SchemaHash` (`lib/migrations.ts`), and what the migrate function
 * computes over the `schema/` folder bundled with it
 * (`aws/migrations-resource.ts`). The two must agree byte for byte, so both call
 * this one function: when they differ, the event is for a schema other than the
 * code's (a rollback), and the function leaves the database alone.
 *
 * Synchronous on purpose: a CDK construct computes it in its constructor.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATION_FILE_PATTERN, SCHEMA_DIR } from './migrations.ts';
import { ROLE_GRANTS } from './database-roles.ts';

/**
 * A SHA-256 (hex) over the names and contents of the migration files in
 * `schemaDir`, in the order they are applied, and over the role grants.
 */
export function schemaHash(schemaDir: string = SCHEMA_DIR): string {
  const hash = createHash('sha256');
  const files = readdirSync(schemaDir).filter((file) => MIGRATION_FILE_PATTERN.test(file)).sort();
  if (files.length === 0) throw new Error(`no migration files (NNN_name.sql) in ${schemaDir}`);
  for (const file of files) hash.update(file).update('\0').update(readFileSync(join(schemaDir, file))).update('\0');
  // The grants live in code: a changed grant must re-run migrate too (and nothing else in that file does).
  hash.update(JSON.stringify(ROLE_GRANTS));
  return hash.digest('hex');
}
