/**
 * The whole chatctx deployment in one stack: database (Aurora PostgreSQL
 * Serverless v2 + Data API), quota table, pepper, the Lambda functions, the
 * migrations custom resource, the public REST API (with a WAF web ACL if asked
 * for), and the alarms, dashboard and budget that watch them.
 *
 * The stack is environment-agnostic (no account/region lookups), so it synthesizes
 * offline without credentials. Its outputs are the MCP URL and the admin
 * function's name (for the owner CLI).
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Database } from './database.ts';
import { McpApi } from './mcp-api.ts';
import { McpFunctions } from './mcp-functions.ts';
import { Migrations } from './migrations.ts';
import { Operations } from './operations.ts';
import { PepperSecret } from './pepper-secret.ts';
import { QuotaTable } from './quota-table.ts';
import { SourceCheckSchedule } from './source-check-schedule.ts';

export interface ChatctxStackProps extends StackProps {
  /**
   * Aurora minimum capacity in ACU; 0 lets the database pause when idle.
   *
   * @default 0
   */
  readonly minCapacity?: number;

  /**
   * Aurora maximum capacity in ACU.
   *
   * @default 4
   */
  readonly maxCapacity?: number;

  /**
   * Whether the Aurora cluster is protected from deletion.
   *
   * @default false
   */
  readonly deletionProtection?: boolean;

  /**
   * Tool calls per guest IP per UTC day; 0 means every call needs a key.
   *
   * @default - the `guestDailyLimit` setting's default (`lambdas/config/settings.ts`)
   */
  readonly guestDailyLimit?: number;

  /**
   * Browser origins allowed to call the MCP endpoint.
   *
   * @default - none
   */
  readonly allowedOrigins?: readonly string[];

  /**
   * Steady-state requests per second the API stage accepts across all clients.
   *
   * @default 50
   */
  readonly throttlingRateLimit?: number;

  /**
   * Burst size the API stage accepts across all clients.
   *
   * @default 100
   */
  readonly throttlingBurstLimit?: number;

  /**
   * Whether a WAF web ACL with a per-IP rate rule guards the API stage.
   *
   * @default false
   */
  readonly waf?: boolean;

  /**
   * Requests one IP may make in any 5 minutes before WAF answers 429 (with `waf`).
   *
   * @default 1000
   */
  readonly perIpRateLimit?: number;

  /**
   * One database role and secret per tool function instead of one shared tool role.
   *
   * @default false
   */
  readonly perFunctionRoles?: boolean;

  /**
   * Custom domain names mapped to the API, accepted as `Host` besides the API's own
   * execute-api host name.
   *
   * @default - none
   */
  readonly customDomains?: readonly string[];

  /**
   * E-mail address subscribed to the alarm topic.
   *
   * @default - none
   */
  readonly alarmEmail?: string;

  /**
   * Monthly cost budget in USD, notifying the alarm topic.
   *
   * @default - no budget
   */
  readonly monthlyBudgetUsd?: number;

  /**
   * The complete ARN of an existing pepper secret to adopt (a restore keeps its
   * keys only with the same pepper).
   *
   * @default - a new pepper secret is generated
   */
  readonly pepperSecretArn?: string;

  /**
   * Whether answers show a record whose quoted evidence drifted with its
   * confidence one step lower.
   *
   * @default false
   */
  readonly driftDemotesConfidence?: boolean;

  /**
   * When the quoted evidence is checked against its pages: an EventBridge
   * `rate(…)` or `cron(…)` expression, or `off`.
   *
   * @default 'rate(7 days)'
   */
  readonly sourceCheckSchedule?: string;

  /**
   * Whether to create and register API Gateway's account-level CloudWatch Logs
   * role (needed once per account and region for API logging).
   *
   * @default true
   */
  readonly apiGatewayCloudWatchRole?: boolean;
}

export class ChatctxStack extends Stack {
  /** Aurora cluster, its VPC and the database secrets. */
  public readonly database: Database;
  /** The quota counters. */
  public readonly quotaTable: QuotaTable;
  /** The HMAC pepper. */
  public readonly pepper: PepperSecret;
  /** Every Lambda function. */
  public readonly functions: McpFunctions;
  /** The migrations custom resource. */
  public readonly migrations: Migrations;
  /** The public REST API. */
  public readonly api: McpApi;
  /** Alarms, dashboard and budget. */
  public readonly operations: Operations;
  /** When the source checks run. */
  public readonly sourceCheckSchedule: SourceCheckSchedule;

  constructor(scope: Construct, id: string, props: ChatctxStackProps = {}) {
    super(scope, id, {
      description: 'chatctx: owner-reviewed engineering guidance over MCP',
      ...props,
    });

    this.database = new Database(this, 'Database', {
      minCapacity: props.minCapacity,
      maxCapacity: props.maxCapacity,
      deletionProtection: props.deletionProtection,
      perFunctionRoles: props.perFunctionRoles,
    });
    this.quotaTable = new QuotaTable(this, 'QuotaTable');
    this.pepper = new PepperSecret(this, 'Pepper', { existingSecretArn: props.pepperSecretArn });

    this.functions = new McpFunctions(this, 'Functions', {
      database: this.database,
      quotaTable: this.quotaTable,
      pepperSecret: this.pepper.secret,
      guestDailyLimit: props.guestDailyLimit,
      allowedOrigins: props.allowedOrigins,
      driftDemotesConfidence: props.driftDemotesConfidence,
    });

    this.migrations = new Migrations(this, 'Migrations', {
      migrateFunction: this.functions.migrate.function,
      database: this.database,
    });
    // The functions that log in as a database role change only after migrate has created
    // the role and set its password: on the first deploy, and when the role layout changes.
    const { gateway, searchKnowledge, getGuidance, submitFeedback, sourceChecks } = this.functions;
    for (const fn of [gateway, searchKnowledge, getGuidance, submitFeedback, sourceChecks]) fn.function.node.addDependency(this.migrations.resource);

    this.api = new McpApi(this, 'Api', {
      gatewayFunction: this.functions.gateway.function,
      siteFunction: this.functions.site.function,
      throttlingRateLimit: props.throttlingRateLimit,
      throttlingBurstLimit: props.throttlingBurstLimit,
      waf: props.waf,
      perIpRateLimit: props.perIpRateLimit,
      cloudWatchRole: props.apiGatewayCloudWatchRole,
    });
    this.functions.allowHosts([this.api.executeApiHost, ...(props.customDomains ?? [])]);

    this.operations = new Operations(this, 'Operations', {
      api: this.api,
      requestPathFunctions: Object.fromEntries(
        Object.entries({ gateway, searchKnowledge, getGuidance, submitFeedback }).map(([name, fn]) => [name, fn.function]),
      ),
      database: this.database,
      canPause: (props.minCapacity ?? 0) === 0,
      quotaTable: this.quotaTable,
      alarmEmail: props.alarmEmail,
      monthlyBudgetUsd: props.monthlyBudgetUsd,
    });

    this.functions.reportSourceChecksTo(this.operations.topic);
    this.sourceCheckSchedule = new SourceCheckSchedule(this, 'SourceCheckSchedule', {
      function: this.functions.sourceChecks.function,
      schedule: props.sourceCheckSchedule,
    });

    new CfnOutput(this, 'McpUrl', {
      description: 'The MCP endpoint (Streamable HTTP)',
      value: this.api.mcpUrl,
    });
    new CfnOutput(this, 'AdminFunctionName', {
      description: 'The owner operations function (invoke with IAM credentials)',
      value: this.functions.admin.function.functionName,
    });
  }
}
