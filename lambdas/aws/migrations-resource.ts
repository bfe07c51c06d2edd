/**
 * The `Custom::ChatctxMigrations` resource's work: apply `schema/` migrations
 * under an advisory lock, then create or update the database roles (retiring any
 * the stack no longer uses), and answer CloudFormation (through the CDK Provider
 * framework) with what was done. Idempotent; Delete does nothing, because data
 * outlives the stack resource.
 *
 * Rollbacks: when an update fails, CloudFormation rolls the custom resource back
 * first, by sending Update with the old properties to the same function, which at
 * that moment still runs the new code (the function is rolled back after the
 * resource that depends on it). Running the new migrations again would fail again
 * and leave the stack in UPDATE_ROLLBACK_FAILED. So the function applies only the
 * schema it carries: an event whose `SchemaHash` is not the hash of the bundled
 * `schema/` folder (`storage/schema-hash.ts`) changes nothing and answers success.
 * That is safe because a failed migration left nothing behind (all of a run's
 * migrations share one transaction, `storage/migrations.ts`), and one that
 * succeeded stays applied: migrations only add, and the old code runs on them.
 * The same holds for the pepper secret: an Update naming another `PepperSecretArn`
 * than the function was deployed with is a rollback too.
 *
 * The pepper: after the migrations, the run checks the pepper the functions will
 * use against the fingerprint the database keeps (`storage/pepper-fingerprint.ts`)
 * and fails the deploy, before any function switches to it, when it is not the one
 * the stored keys and grants were made with.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import type { Logger } from '../ports/logger.ts';
import type { Sql } from '../ports/sql.ts';
import type { RoleCredentials } from '../ports/secrets.ts';
import { loadMigrations, migrate } from '../storage/migrations.ts';
import { applyRoles } from '../storage/database-roles.ts';
import { schemaHash } from '../storage/schema-hash.ts';
import { fillExcerptHashes } from '../records/source-verification.ts';
import { checkPepper, type PepperSource } from '../storage/pepper-fingerprint.ts';

export interface MigrateResult {
  PhysicalResourceId: string;
  /** Strings only: CloudFormation exposes them as the resource's attributes. */
  Data: { applied: string; roles: string; pepper?: string; skipped?: string };
}

/** The pepper the deployed functions use: where it lives, how the stack got it, and its bytes. */
export interface DeployedPepper {
  readonly secretArn: string;
  readonly source: PepperSource;
  /** The owner replaces the pepper on purpose (`chatctx:replacePepper`): a different one is recorded, not refused. */
  readonly replace?: boolean;
  readonly read: () => Promise<Buffer>;
}

const PHYSICAL_ID = 'chatctx-schema';

/** Enough of a SHA-256 to tell two schemas apart in a message. */
const short = (hash: string) => hash.slice(0, 12) || '(none)';

export async function runMigrations(
  sql: Sql,
  schemaDir: string,
  roles: Readonly<Record<string, RoleCredentials>>,
  pepper?: DeployedPepper,
): Promise<MigrateResult> {
  const applied = await migrate(sql, await loadMigrations(schemaDir));
  // Sources imported before their excerpt digest was kept get it now (schema/008_evidence_standing.sql).
  await fillExcerptHashes(sql);
  // Before the roles: a refused pepper fails the deploy with nothing else changed.
  const pepperState = pepper ? await checkPepper(sql, await pepper.read(), pepper.source, { replace: pepper.replace }) : undefined;
  const granted = await applyRoles(sql, roles);
  return { PhysicalResourceId: PHYSICAL_ID, Data: { applied: applied.join(',') || 'none', roles: granted.join(','), pepper: pepperState } };
}

export interface MigrationsEventDeps {
  /** The hash of the schema bundled with this code; asked for Create and Update only. */
  readonly bundledHash: () => string;
  /** Applies the bundled schema and the roles. */
  readonly run: () => Promise<MigrateResult>;
  readonly logger: Logger;
  /** The pepper secret this code was deployed with, when it checks one. */
  readonly pepperSecretArn?: string;
}

/**
 * Create and Update migrate when they ask for the bundled schema; an Update for
 * another schema (a rollback, or a stale call) changes nothing; Delete keeps the data.
 */
export async function onMigrationsEvent(
  event: CloudFormationCustomResourceEvent,
  deps: MigrationsEventDeps,
): Promise<MigrateResult | { PhysicalResourceId: string }> {
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const requested = typeof event.ResourceProperties.SchemaHash === 'string' ? event.ResourceProperties.SchemaHash : '';
  const bundled = deps.bundledHash();
  const pepperMatches = deps.pepperSecretArn === undefined || event.ResourceProperties.PepperSecretArn === deps.pepperSecretArn;
  if (requested === bundled && pepperMatches) return deps.run();
  const fields = { request: event.RequestType, requested: short(requested), bundled: short(bundled), pepper: pepperMatches ? 'same' : 'other' };
  if (event.RequestType === 'Create') {
    // Not treated like an Update, on purpose. CloudFormation never sends Create to
    // roll back (a failed create is undone with Delete), and our physical id never
    // changes, so nothing replaces the resource: a Create for another schema means
    // the deployed code is not the code the template was synthesized with. Answering
    // success would finish the stack over a database without its schema, silently;
    // failing the create stops it where an operator looks, and Delete is harmless.
    deps.logger.error('migrations_refused', fields);
    throw new Error(
      `migrate: Create asks for schema ${fields.requested} but this code carries ${fields.bundled} (pepper secret: ${fields.pepper}); ` +
        'deploy the code the template was synthesized with',
    );
  }
  deps.logger.warn('migrations_skipped', fields);
  return {
    PhysicalResourceId: event.PhysicalResourceId,
    Data: {
      applied: 'none',
      roles: 'none',
      skipped: pepperMatches
        ? `schema ${fields.requested} is not the bundled ${fields.bundled}: a rollback or a stale call; nothing applied`
        : 'the pepper secret asked for is not the one this code was deployed with: a rollback or a stale call; nothing applied',
    },
  };
}

export interface MigrationsHandlerDeps {
  /** The `schema/` folder shipped with this code (beside the bundle on Lambda), ending in `/`. */
  readonly schemaDir: string;
  /** A connection as the master user; opened only when there is work. */
  readonly sql: () => Sql;
  /** The login roles to create or update, and their passwords. */
  readonly roles: () => Promise<Readonly<Record<string, RoleCredentials>>>;
  readonly logger: Logger;
  /** The pepper to check against the database's fingerprint, read from the settings when an event comes. @default not checked */
  readonly pepper?: () => DeployedPepper;
}

/** The migrate function: custom resource events in, answers for the Provider framework out. */
export function migrationsHandler(deps: MigrationsHandlerDeps) {
  let bundled: string | undefined;
  return (event: CloudFormationCustomResourceEvent) => {
    // A Delete needs no settings: it answers before anything is read.
    const pepper = event.RequestType === 'Delete' ? undefined : deps.pepper?.();
    return onMigrationsEvent(event, {
      // Once per cold start: the bundled files do not change under a running function.
      bundledHash: () => (bundled ??= schemaHash(deps.schemaDir)),
      run: async () => runMigrations(deps.sql(), deps.schemaDir, await deps.roles(), pepper),
      logger: deps.logger,
      pepperSecretArn: pepper?.secretArn,
    });
  };
}
