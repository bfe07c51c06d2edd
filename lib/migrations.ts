/**
 * Runs the migrate function as a CloudFormation custom resource, so that a deploy
 * applies `schema/*.sql` and (re)creates the database roles before the stack
 * reports success, and a failed migration fails the deploy.
 *
 * CloudFormation calls a custom resource again only when its properties change.
 * The properties are therefore a content hash of the migration files and of the
 * role grants (`lambdas/storage/database-roles.ts`), the role names and the role
 * secrets' ARNs, and the cluster's ARN and database name, and nothing time-based (a
 * timestamp would make every synth differ): a deploy that changes a migration, a
 * grant, a role or a role secret runs migrate, and so does one that replaces the
 * cluster (an empty database needs the schema and the roles again); any other
 * deploy has nothing for it to do. Migrations are idempotent, so a repeated run is
 * harmless.
 *
 * A failed update rolls back by sending Update with the old properties to a migrate
 * function that still runs the new code; the function compares `SchemaHash` with the
 * hash of the schema bundled with it and skips an event for any other schema
 * (`lambdas/aws/migrations-resource.ts`), so a rollback never re-runs the migration
 * that failed.
 */
import { CustomResource, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { DATABASE_ROLES, databaseRolePurposes, type Database } from './database.ts';
import { schemaHash } from '../lambdas/storage/schema-hash.ts';

// The hash lives beside the migrations so that the migrate function computes the
// same value over its bundled copy of the schema; re-exported for existing callers.
export { schemaHash };

/** The custom resource's CloudFormation type. */
export const MIGRATIONS_RESOURCE_TYPE = 'Custom::ChatctxMigrations';

export interface MigrationsProps {
  /** The migrate function; it receives the custom resource events. */
  readonly migrateFunction: lambda.IFunction;

  /** The database it migrates; the migration runs after the cluster and its writer exist. */
  readonly database: Database;

  /**
   * The secret the functions read the pepper from. Migrate checks it against the
   * database's fingerprint, so a change of it runs migrate (and a refusal stops the
   * deploy before any function switches to it).
   */
  readonly pepperSecret: secretsmanager.ISecret;

  /**
   * The folder holding the migration files whose hash triggers a run.
   *
   * @default `<project root>/schema`
   */
  readonly schemaDir?: string;

  /**
   * How long the custom-resource framework's own logs are kept.
   *
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
}

export class Migrations extends Construct {
  /** The custom resource; other resources that need the schema can depend on it. */
  public readonly resource: CustomResource;
  /** The custom-resource provider (framework function in front of migrate). */
  public readonly provider: cr.Provider;
  /** The hash of the migration files this synth saw. */
  public readonly schemaHash: string;

  constructor(scope: Construct, id: string, props: MigrationsProps) {
    super(scope, id);
    this.schemaHash = schemaHash(props.schemaDir);
    const { database } = props;

    // The framework function's own role: its log group and invoking migrate, instead
    // of the default role with the managed AWSLambdaBasicExecutionRole policy.
    const providerLogs = new logs.LogGroup(this, 'ProviderLogs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    const providerRole = new iam.Role(this, 'ProviderRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Custom-resource framework in front of the migrate function',
    });
    providerRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [providerLogs.logGroupArn],
      }),
    );
    this.provider = new cr.Provider(this, 'Provider', {
      onEventHandler: props.migrateFunction,
      logGroup: providerLogs,
      frameworkOnEventRole: providerRole,
    });
    const migrateLogicalId = Stack.of(this).getLogicalId(props.migrateFunction.node.defaultChild as CfnElement);
    Validations.of(providerRole).acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${migrateLogicalId}.Arn>:*]`,
      reason:
        'Added by the CDK custom-resource framework (grantInvoke on the migrate function, all its versions and aliases); ' +
        'the wildcard covers nothing but the migrate function.',
    });

    const purposes = databaseRolePurposes(database.perFunctionRoles);
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: this.provider.serviceToken,
      resourceType: MIGRATIONS_RESOURCE_TYPE,
      properties: {
        SchemaHash: this.schemaHash,
        Roles: purposes.map((purpose) => DATABASE_ROLES[purpose]),
        RoleSecretArns: purposes.map((purpose) => database.roleSecret(purpose).secretArn),
        // A replaced cluster has a new identifier (and so ARN): migrate runs against it.
        ClusterArn: database.cluster.clusterArn,
        PepperSecretArn: props.pepperSecret.secretArn,
        DatabaseName: database.databaseName,
      },
    });
    // The cluster construct holds the writer instance and the master secret's
    // attachment: the Data API answers only once the writer is available.
    this.resource.node.addDependency(database.cluster);
  }
}
