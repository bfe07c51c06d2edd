/**
 * The `Custom::ChatctxMigrations` resource's work: apply `schema/` migrations
 * under an advisory lock, then create or update the database roles (retiring any
 * the stack no longer uses), and answer CloudFormation (through the CDK Provider
 * framework) with what was done. Idempotent; Delete does nothing, because data
 * outlives the stack resource.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import type { Sql } from '../ports/sql.ts';
import type { RoleCredentials } from '../ports/secrets.ts';
import { loadMigrations, migrate } from '../storage/migrations.ts';
import { applyRoles } from '../storage/database-roles.ts';
import { fillExcerptHashes } from '../records/source-verification.ts';

export interface MigrateResult {
  PhysicalResourceId: string;
  Data: { applied: string; roles: string };
}

const PHYSICAL_ID = 'chatctx-schema';

export async function runMigrations(sql: Sql, schemaDir: string, roles: Readonly<Record<string, RoleCredentials>>): Promise<MigrateResult> {
  const applied = await migrate(sql, await loadMigrations(schemaDir));
  // Sources imported before their excerpt digest was kept get it now (schema/008_evidence_standing.sql).
  await fillExcerptHashes(sql);
  const granted = await applyRoles(sql, roles);
  return { PhysicalResourceId: PHYSICAL_ID, Data: { applied: applied.join(',') || 'none', roles: granted.join(',') } };
}

/** Create and Update migrate; Delete keeps the data. */
export async function onMigrationsEvent(
  event: CloudFormationCustomResourceEvent,
  run: () => Promise<MigrateResult>,
): Promise<MigrateResult | { PhysicalResourceId: string }> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  return run();
}
