/**
 * Lambda entry of the `migrate` custom resource, run by CloudFormation on every
 * deploy (through the CDK Provider framework): applies `schema/` migrations through
 * the Data API under an advisory lock, then creates or updates the per-function
 * database roles. Idempotent; Delete does nothing (data outlives the stack resource).
 * The SQL files are copied next to the bundle at build time (`schema/`).
 */
import { join } from 'node:path';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DataApiSql } from '../storage/data-api-sql.ts';
import { loadMigrations, migrate } from '../storage/migrations.ts';
import { applyRoles, type RoleCredentials, type RoleName } from '../storage/database-roles.ts';
import { databaseEnv } from '../aws/environment.ts';
import type { Sql } from '../ports/sql.ts';

export interface MigrateResult {
  PhysicalResourceId: string;
  Data: { applied: string; roles: string };
}

const PHYSICAL_ID = 'chatctx-schema';

export async function runMigrations(
  sql: Sql,
  schemaDir: string,
  roleSecrets: Partial<Record<RoleName, RoleCredentials>>,
): Promise<MigrateResult> {
  const applied = await migrate(sql, await loadMigrations(schemaDir));
  const roles = await applyRoles(sql, roleSecrets);
  return { PhysicalResourceId: PHYSICAL_ID, Data: { applied: applied.join(',') || 'none', roles: roles.join(',') } };
}

async function readRoleSecrets(client: SecretsManagerClient, arns: Record<string, string>): Promise<Partial<Record<RoleName, RoleCredentials>>> {
  const out: Partial<Record<RoleName, RoleCredentials>> = {};
  for (const [role, arn] of Object.entries(arns)) {
    const value = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    const parsed = JSON.parse(value.SecretString ?? '{}') as { username?: string; password?: string };
    if (!parsed.username || !parsed.password) throw new Error(`The secret for ${role} has no username or password.`);
    out[role as RoleName] = { username: parsed.username, password: parsed.password };
  }
  return out;
}

export async function handler(event: CloudFormationCustomResourceEvent): Promise<MigrateResult | { PhysicalResourceId: string }> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const roleArns = JSON.parse(process.env.ROLE_SECRET_ARNS ?? '{}') as Record<string, string>;
  const schemaDir = join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), 'schema') + '/';
  const sql = new DataApiSql({ ...databaseEnv(process.env), timeBudgetMs: 60_000 });
  return runMigrations(sql, schemaDir, await readRoleSecrets(new SecretsManagerClient({}), roleArns));
}
