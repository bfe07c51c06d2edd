/**
 * A deploy whose new migration fails, replayed against the migrate function the
 * way CloudFormation drives it: the update fails and leaves nothing behind; the
 * rollback (Update with the old properties, sent to the function that still runs
 * the new code and carries the new schema) answers success without touching the
 * database, so the stack ends UPDATE_ROLLBACK_COMPLETE instead of
 * UPDATE_ROLLBACK_FAILED; the fixed deploy then applies the migration once. Over
 * the Data API adapter, against PGlite behind a Data-API-compatible endpoint.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent as createResourceEvent, deleteEvent as deleteResourceEvent, updateEvent as updateResourceEvent } from '../support/custom-resource-events.ts';
import { fixtureSql, startDataApiFixture } from '../support/data-api-fixture.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { SCHEMA_DIR } from '../../lambdas/storage/migrations.ts';
import { schemaHash } from '../../lambdas/storage/schema-hash.ts';
import { migrationsHandler, type MigrateResult } from '../../lambdas/aws/migrations-resource.ts';
import { ROLE_GRANTS, type RoleName } from '../../lambdas/storage/database-roles.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';

const NEW_MIGRATION = '999_broken.sql';
/** Creates a table, then fails on its second insert: only a transaction keeps the table from staying behind. */
const BROKEN = "CREATE TABLE rollback_probe (id int PRIMARY KEY);\nINSERT INTO rollback_probe (id) VALUES (1);\nINSERT INTO rollback_probe (id) VALUES ('not a number');\n";
const FIXED = 'CREATE TABLE IF NOT EXISTS rollback_probe (id int PRIMARY KEY);\nINSERT INTO rollback_probe (id) VALUES (1), (2) ON CONFLICT DO NOTHING;\n';
const ORIGINAL_VERSIONS = readdirSync(SCHEMA_DIR).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort().map((f) => f.replace(/\.sql$/, ''));

let fixture: Awaited<ReturnType<typeof startDataApiFixture>>;
let sql: DataApiSql;
const dirs: string[] = [];
const logLines: string[] = [];

const secrets = Object.fromEntries(
  (Object.keys(ROLE_GRANTS) as RoleName[]).map((role) => [role, { username: role, password: `pw-${role}` }]),
) as Record<RoleName, { username: string; password: string }>;

/** What the bundling hook puts beside the migrate bundle: every schema/*.sql, plus `extra` files. */
function bundledSchema(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'chatctx-bundled-schema-'));
  dirs.push(dir);
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.sql'))) copyFileSync(join(SCHEMA_DIR, file), join(dir, file));
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
  return dir + '/';
}

/** The migrate function as deployed with `schemaDir` in its bundle, on a fresh cold start. */
const deployedWith = (schemaDir: string) =>
  migrationsHandler({ schemaDir, sql: () => sql, roles: async () => secrets, logger: createLogger((line) => logLines.push(line)) });

const properties = (hash: string) => ({ SchemaHash: hash, Roles: Object.keys(secrets) });
const createEvent = (hash: string) => createResourceEvent(properties(hash));
const updateEvent = (hash: string, oldHash: string) => updateResourceEvent(properties(hash), properties(oldHash));

const probeTableExists = async () => (await sql.query<{ found: string | null }>("SELECT to_regclass('rollback_probe')::text AS found"))[0]!.found !== null;
const recorded = async () => (await sql.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version);

beforeAll(async () => {
  fixture = await startDataApiFixture();
  sql = fixtureSql(fixture);
}, 240_000);

afterAll(async () => {
  await fixture?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a failed migration, its rollback and the fixed deploy', () => {
  const schemaA = bundledSchema();
  const schemaB = bundledSchema({ [NEW_MIGRATION]: BROKEN });
  const schemaFixed = bundledSchema({ [NEW_MIGRATION]: FIXED });
  const [hashA, hashB, hashFixed] = [schemaA, schemaB, schemaFixed].map((dir) => schemaHash(dir)) as [string, string, string];

  it('hashes a bundled copy of the schema as the stack hashes schema/', () => {
    expect(hashA).toBe(schemaHash());
    expect(new Set([hashA, hashB, hashFixed]).size).toBe(3);
  });

  it('creates the stack: the schema and the roles are applied', async () => {
    const answer = await deployedWith(schemaA)(createEvent(hashA));
    expect(answer).toEqual({ PhysicalResourceId: 'chatctx-schema', Data: { applied: ORIGINAL_VERSIONS.join(','), roles: expect.any(String) } });
    expect(await recorded()).toEqual(ORIGINAL_VERSIONS);
  });

  it('fails the update whose new migration breaks midway, and leaves nothing of it behind', async () => {
    await expect(deployedWith(schemaB)(updateEvent(hashB, hashA))).rejects.toThrow(/SQLSTATE 22P02/);
    expect(fixture.operations).toContain('RollbackTransaction');
    expect(await probeTableExists()).toBe(false);
    expect(await recorded()).toEqual(ORIGINAL_VERSIONS);
  });

  it('answers the rollback (the old schema, sent to the function carrying the new one) with success, touching nothing', async () => {
    const [calls, lines] = [fixture.calls.length, logLines.length];
    const answer = await deployedWith(schemaB)(updateEvent(hashA, hashB));
    expect(answer).toEqual({
      PhysicalResourceId: 'chatctx-schema',
      Data: {
        applied: 'none',
        roles: 'none',
        skipped: `schema ${hashA.slice(0, 12)} is not the bundled ${hashB.slice(0, 12)}: a rollback or a stale call; nothing applied`,
      },
    });
    expect(fixture.calls.length).toBe(calls);
    const logged = logLines.slice(lines);
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0]!)).toMatchObject({ level: 'warn', event: 'migrations_skipped', request: 'Update', requested: hashA.slice(0, 12), bundled: hashB.slice(0, 12) });
    expect(logged[0]).not.toMatch(/rollback_probe|INSERT|CREATE/);
    expect(await probeTableExists()).toBe(false);
    expect(await recorded()).toEqual(ORIGINAL_VERSIONS);
  });

  it('applies the fixed migration on the next deploy, once', async () => {
    const fixedFunction = deployedWith(schemaFixed);
    const first = await fixedFunction(updateEvent(hashFixed, hashA));
    expect(first).toMatchObject({ PhysicalResourceId: 'chatctx-schema', Data: { applied: '999_broken' } });
    expect(await recorded()).toEqual([...ORIGINAL_VERSIONS, '999_broken']);
    expect(await sql.query('SELECT id FROM rollback_probe ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);

    const again = await fixedFunction(updateEvent(hashFixed, hashA));
    expect(again).toEqual({ PhysicalResourceId: 'chatctx-schema', Data: { applied: 'none', roles: (first as MigrateResult).Data.roles } });
    expect(await recorded()).toEqual([...ORIGINAL_VERSIONS, '999_broken']);
    expect(await sql.query('SELECT id FROM rollback_probe ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });
});

describe('events that change nothing', () => {
  /** A function whose database and schema folder must not be reached. */
  const untouchable = () =>
    migrationsHandler({
      schemaDir: '/nonexistent/schema/',
      sql: () => {
        throw new Error('the database was reached');
      },
      roles: async () => {
        throw new Error('the role secrets were read');
      },
      logger: createLogger((line) => logLines.push(line)),
    });

  it('a Delete answers with its physical id, reading neither the schema nor the database', async () => {
    const event: CloudFormationCustomResourceEvent = deleteResourceEvent(properties('a'.repeat(64)));
    await expect(untouchable()(event)).resolves.toEqual({ PhysicalResourceId: 'chatctx-schema' });
  });

  it('a Create for a schema the function does not carry fails the deploy without running a migration', async () => {
    const bundled = bundledSchema();
    const onlySchema = migrationsHandler({
      schemaDir: bundled,
      sql: () => {
        throw new Error('the database was reached');
      },
      roles: async () => secrets,
      logger: createLogger((line) => logLines.push(line)),
    });
    await expect(onlySchema(createEvent('b'.repeat(64)))).rejects.toThrow(/Create asks for schema bbbbbbbbbbbb but this code carries [0-9a-f]{12}/);
  });
});
