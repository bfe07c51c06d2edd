/**
 * The chatctx database: Aurora PostgreSQL 16 Serverless v2 with the Data API, in a
 * VPC that has only isolated subnets (no NAT, no internet route, nothing inside but
 * the cluster). The Lambdas stay outside the VPC and speak SQL over the Data API,
 * which authenticates each call with a Secrets Manager secret.
 *
 * Owns the cluster, its master secret (used only by the admin and migrate
 * functions) and one secret per least-privilege database role of the chosen layout
 * (`databaseRolePurposes`). It does not create the roles inside Postgres or grant
 * them anything: the migrate function does that on every deploy from `roleSecrets`
 * (see `migrations.ts`).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { PEPPER_JSON_KEY, PEPPER_LENGTH } from './pepper-secret.ts';
// The migrate function grants these roles; a name it does not know would get no grants.
import type { RoleName } from '../lambdas/storage/database-roles.ts';

/** The Postgres roles the functions log in as, by purpose. */
export const DATABASE_ROLES = {
  /** search_knowledge (per-function layout): reads approved records, writes search events and the embedding cache. */
  search: 'chatctx_search',
  /** get_guidance (per-function layout): reads approved records. */
  reader: 'chatctx_reader',
  /** submit_feedback (per-function layout): inserts feedback. */
  feedback: 'chatctx_feedback',
  /** The three tools and the source check together (default layout): the union of their grants, no API keys. */
  runtime: 'chatctx_runtime',
  /** The MCP gateway: looks up API keys and records their last use. */
  gateway: 'chatctx_gateway',
  /** The scheduled source check (per-function layout): reads the quoted sources, writes only their checks. */
  verifier: 'chatctx_verifier',
} as const satisfies Record<string, RoleName>;

export type DatabaseRolePurpose = keyof typeof DATABASE_ROLES;
export type DatabaseRoleName = (typeof DATABASE_ROLES)[DatabaseRolePurpose];
/** The role purposes of the three tool functions and the source check in the per-function layout. */
export type ToolRolePurpose = 'search' | 'reader' | 'feedback' | 'verifier';

/**
 * The roles (and so the Secrets Manager secrets) a layout uses. Each secret costs
 * USD 0.40 a month, so by default the tools and the scheduled source check share
 * one role; the gateway always keeps its own, because it alone may read API key
 * hashes. With per-function roles each of them has its own, and the source check's
 * may write nothing but its results.
 */
export function databaseRolePurposes(perFunctionRoles: boolean): readonly DatabaseRolePurpose[] {
  return perFunctionRoles ? ['search', 'reader', 'feedback', 'gateway', 'verifier'] : ['runtime', 'gateway'];
}

/** The Data API calls a function needs to run statements and transactions. */
export const DATA_API_ACTIONS = [
  'rds-data:ExecuteStatement', 'rds-data:BeginTransaction',
  'rds-data:CommitTransaction', 'rds-data:RollbackTransaction',
] as const;

/**
 * The engine, chosen here and nowhere else: Aurora PostgreSQL 16.8, which has
 * auto-pause (0 ACU), the Data API for Serverless v2 and pgvector. Minor upgrades
 * inside 16 are applied by RDS (`autoMinorVersionUpgrade`); a major upgrade is a
 * deliberate change of this line.
 */
export const DATABASE_ENGINE_VERSION = rds.AuroraPostgresEngineVersion.VER_16_8;

const SECRET_ROTATION_REASON =
  'A rotation Lambda must reach the database over the network, i.e. join the isolated VPC and get a Secrets Manager ' +
  'interface endpoint there, for rotation alone. Passwords are changed by replacing a secret and deploying: the ' +
  'cluster takes its master password from its secret, and the migrate custom resource re-runs when a role ' +
  "secret's ARN changes and sets that role's new password.";

export interface DatabaseProps {
  /**
   * Smallest capacity in Aurora capacity units (0–256, in steps of 0.5). `0` lets the
   * cluster pause when idle; the first call after a pause waits for it to resume.
   *
   * @default 0
   */
  readonly minCapacity?: number;

  /**
   * Largest capacity in Aurora capacity units (1–256, in steps of 0.5, at least
   * `minCapacity`).
   *
   * @default 4
   */
  readonly maxCapacity?: number;

  /**
   * Whether the cluster refuses to be deleted. Turn it on for a production stack.
   *
   * @default false
   */
  readonly deletionProtection?: boolean;

  /**
   * How long automated backups are kept (1–35 days).
   *
   * @default Duration.days(7)
   */
  readonly backupRetention?: Duration;

  /**
   * Name of the database created in the cluster.
   *
   * @default 'chatctx'
   */
  readonly databaseName?: string;

  /**
   * One database role (and secret) per tool function and for the source check
   * instead of one shared tool role: stricter separation for USD 1.60 a month more.
   *
   * @default false
   */
  readonly perFunctionRoles?: boolean;
}

export class Database extends Construct {
  /** The VPC holding the cluster: isolated subnets only. */
  public readonly vpc: ec2.Vpc;
  /** The Aurora cluster. */
  public readonly cluster: rds.DatabaseCluster;
  /** The master user's secret. Only the admin and migrate functions may read it. */
  public readonly masterSecret: secretsmanager.ISecret;
  /**
   * One secret per role of the layout, `{"username": role, "password": …}` plus the
   * cluster's address; roles of the other layout are absent.
   */
  public readonly roleSecrets: Readonly<Partial<Record<DatabaseRolePurpose, secretsmanager.ISecret>>>;
  /** Whether each tool function has its own role. */
  public readonly perFunctionRoles: boolean;
  /** The tool role's secret, which holds the pepper in both layouts (see `createRuntimeSecret`). */
  public readonly runtimeSecret: secretsmanager.Secret;
  /** The secret to read the pepper from: the runtime secret (attached to the cluster in the default layout). */
  public readonly pepperHolder: secretsmanager.ISecret;
  /** The database the functions use. */
  public readonly databaseName: string;

  constructor(scope: Construct, id: string, props: DatabaseProps = {}) {
    super(scope, id);
    const minCapacity = props.minCapacity ?? 0;
    const maxCapacity = props.maxCapacity ?? 4;
    const backupRetention = props.backupRetention ?? Duration.days(7);
    this.databaseName = props.databaseName ?? 'chatctx';
    validate(minCapacity, maxCapacity, backupRetention, this.databaseName);

    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'database', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      // Nothing is ever placed in the default security group (the cluster has its
      // own), so locking it down would only add a custom-resource Lambda.
      restrictDefaultSecurityGroup: false,
    });
    this.vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(
        new logs.LogGroup(this, 'FlowLogGroup', { retention: logs.RetentionDays.ONE_MONTH }),
      ),
      trafficType: ec2.FlowLogTrafficType.ALL,
    });

    this.cluster = new rds.DatabaseCluster(this, 'Cluster', {
      engine: rds.DatabaseClusterEngine.auroraPostgres({ version: DATABASE_ENGINE_VERSION }),
      writer: rds.ClusterInstance.serverlessV2('writer', { autoMinorVersionUpgrade: true }),
      serverlessV2MinCapacity: minCapacity,
      serverlessV2MaxCapacity: maxCapacity,
      enableDataApi: true,
      credentials: rds.Credentials.fromGeneratedSecret('chatctx_admin'),
      defaultDatabaseName: this.databaseName,
      vpc: this.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      storageEncrypted: true,
      backup: { retention: backupRetention },
      deletionProtection: props.deletionProtection ?? false,
      removalPolicy: RemovalPolicy.SNAPSHOT,
    });
    if (!this.cluster.secret) throw new Error('the cluster was created without a master secret');
    this.masterSecret = this.cluster.secret;
    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions::AwsSolutions-RDS6',
      reason:
        'No client connects over the network: the cluster is in isolated subnets with no ingress rule, and every ' +
        'statement goes through the Data API, which authenticates the caller with IAM and the database user with a ' +
        'Secrets Manager secret.',
    });
    if (!(props.deletionProtection ?? false)) {
      Validations.of(this.cluster).acknowledge({
        id: 'AwsSolutions::AwsSolutions-RDS10',
        reason:
          'Deletion protection is the context parameter chatctx:deletionProtection (off by default so that trial stacks ' +
          'can be removed; the cluster is still snapshotted on removal). Production stacks set it to true.',
      });
    }

    this.perFunctionRoles = props.perFunctionRoles ?? false;
    this.runtimeSecret = this.createRuntimeSecret();
    this.roleSecrets = this.createRoleSecrets();
    this.pepperHolder = this.roleSecrets.runtime ?? this.runtimeSecret;
    const masterSecretResource = this.cluster.node.tryFindChild('Secret');
    if (masterSecretResource) {
      Validations.of(masterSecretResource).acknowledge({ id: 'AwsSolutions::AwsSolutions-SMG4', reason: SECRET_ROTATION_REASON });
    }
  }

  /**
   * The tool role's secret, which also holds the pepper (`{"username", "pepper",
   * "password", …}`): the HMAC key of every API key hash, OAuth grant, guest counter
   * and query hash. Secrets Manager generates the pepper once; the migrate function
   * writes the password (and sets it on the role) when the secret has none. One
   * secret instead of two saves USD 0.40 a month and keeps the key boundary: this
   * role may not read API key hashes, only `chatctx_gateway` may.
   *
   * It exists in both layouts, under the same id, so switching layouts keeps the
   * pepper; with per-function roles `chatctx_runtime` is retired (no login) and the
   * secret holds the pepper alone. It outlives the stack (retained on removal).
   */
  private createRuntimeSecret(): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, 'RuntimeSecret', {
      description:
        'chatctx: the chatctx_runtime database login and the pepper, the HMAC key of every API key hash and OAuth grant. ' +
        'Keep it: a new pepper revokes every key. Never edit the pepper.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ username: DATABASE_ROLES.runtime, dbname: this.databaseName }),
        generateStringKey: PEPPER_JSON_KEY,
        passwordLength: PEPPER_LENGTH,
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'It holds the pepper, the HMAC key of every API key hash: rotating it would revoke every key at once. The role ' +
        "password beside it is written by the migrate function, which writes a new one when the field is removed. " +
        SECRET_ROTATION_REASON,
    });
    return secret;
  }

  /** One secret per login role of the layout; the tool role's is the runtime secret, attached to the cluster. */
  private createRoleSecrets(): Partial<Record<DatabaseRolePurpose, secretsmanager.ISecret>> {
    const roleSecrets: Partial<Record<DatabaseRolePurpose, secretsmanager.ISecret>> = {};
    for (const purpose of databaseRolePurposes(this.perFunctionRoles)) {
      if (purpose === 'runtime') {
        roleSecrets.runtime = this.runtimeSecret.attach(this.cluster);
        continue;
      }
      // DatabaseSecret's generated password leaves out quotes, backslashes and other
      // characters that would need escaping in `CREATE ROLE … PASSWORD '…'`.
      const secret = new rds.DatabaseSecret(this, `${pascal(purpose)}Secret`, { username: DATABASE_ROLES[purpose], dbname: this.databaseName });
      roleSecrets[purpose] = secret.attach(this.cluster);
      Validations.of(secret).acknowledge({ id: 'AwsSolutions::AwsSolutions-SMG4', reason: SECRET_ROTATION_REASON });
    }
    return roleSecrets;
  }

  /** The role a tool function (or the source check) logs in as: its own, or the shared tool role. */
  public toolRole(purpose: ToolRolePurpose): DatabaseRolePurpose {
    return this.perFunctionRoles ? purpose : 'runtime';
  }

  /** The secret of a role of this layout; asking for another layout's role is a wiring error. */
  public roleSecret(purpose: DatabaseRolePurpose): secretsmanager.ISecret {
    const secret = this.roleSecrets[purpose];
    if (!secret) throw new Error(`the ${DATABASE_ROLES[purpose]} role is not part of this layout`);
    return secret;
  }

  /**
   * Lets `grantee` run statements and transactions through the Data API. Unlike
   * `cluster.grantDataApiAccess`, this grants no secret: every function reads only
   * the secret of the role it logs in as.
   */
  public grantDataApi(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: [...DATA_API_ACTIONS],
      resourceArns: [this.cluster.clusterArn],
    });
  }
}

function validate(minCapacity: number, maxCapacity: number, backupRetention: Duration, databaseName: string): void {
  const halfSteps = (n: number) => Number.isInteger(n * 2);
  if (!halfSteps(minCapacity) || minCapacity < 0 || minCapacity > 256) {
    throw new Error(`minCapacity must be 0–256 ACU in steps of 0.5, got ${minCapacity}`);
  }
  if (!halfSteps(maxCapacity) || maxCapacity < 1 || maxCapacity > 256) {
    throw new Error(`maxCapacity must be 1–256 ACU in steps of 0.5, got ${maxCapacity}`);
  }
  if (maxCapacity < minCapacity) {
    throw new Error(`maxCapacity (${maxCapacity}) must be at least minCapacity (${minCapacity})`);
  }
  const days = backupRetention.toDays({ integral: false });
  if (!Number.isInteger(days) || days < 1 || days > 35) {
    throw new Error(`backupRetention must be 1–35 whole days, got ${backupRetention.toHumanString()}`);
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(databaseName)) {
    throw new Error(`databaseName must be a lower-case Postgres identifier, got "${databaseName}"`);
  }
}

function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
