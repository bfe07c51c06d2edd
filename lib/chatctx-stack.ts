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
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { Database } from './database.ts';
import { McpApi, type McpApiCustomDomain } from './mcp-api.ts';
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
   * Custom domain names mapped to the API outside this stack (at their root),
   * accepted as `Host` besides the API's own execute-api host name.
   *
   * @default - none
   */
  readonly customDomains?: readonly string[];

  /**
   * The custom domain the stack builds and maps at its root to the stage, for
   * connectors (OAuth metadata at the host's root); it becomes the MCP URL.
   *
   * @default - none
   */
  readonly customDomain?: McpApiCustomDomain;

  /**
   * E-mail address subscribed to the alarm topic.
   *
   * @default - none
   */
  readonly alarmEmail?: string;

  /**
   * Monthly cost budget in USD, notifying the alarm topic; 0 creates none.
   *
   * @default 30
   */
  readonly monthlyBudgetUsd?: number;

  /**
   * Total impact in USD from which a cost anomaly is sent to the alarm topic (Cost
   * Anomaly Detection, AWS services monitor); 0 creates no monitor.
   *
   * @default 10
   */
  readonly costAnomalyUsd?: number;

  /**
   * Whether to build the CloudWatch dashboard (free for an account's first three,
   * then USD 3.00 a month).
   *
   * @default false
   */
  readonly dashboard?: boolean;


  /**
   * The complete ARN of an existing pepper secret to adopt (a restore keeps its
   * keys only with the same pepper).
   *
   * @default - a new pepper secret is generated
   */
  readonly pepperSecretArn?: string;

  /**
   * Whether this deploy replaces the pepper on purpose: migrate records the new one
   * instead of refusing it, and every stored API key and OAuth grant stops working.
   * Set it for one deploy, then remove it.
   *
   * @default false
   */
  readonly replacePepper?: boolean;

  /**
   * Whether answers show a record whose quoted evidence drifted with its
   * confidence one step lower.
   *
   * @default false
   */
  readonly driftDemotesConfidence?: boolean;

  /**
   * The Bedrock reranker model search_knowledge sends its best candidates to
   * (`cohere.rerank-v3-5:0` or `amazon.rerank-v1:0`, whichever the region offers),
   * or `none`.
   *
   * @default 'none'
   */
  readonly reranker?: string;

  /**
   * When the quoted evidence is checked against its pages: an EventBridge
   * `rate(…)` or `cron(…)` expression, or `off`.
   *
   * @default 'rate(7 days)'
   */
  readonly sourceCheckSchedule?: string;

  /**
   * Concurrent executions reserved for the MCP gateway function (also its most at
   * once); 0 reserves none.
   *
   * @default 100
   */
  readonly gatewayConcurrency?: number;

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
  /** The managed policy that makes a principal an owner (may invoke the admin function). */
  public readonly ownerPolicy: iam.ManagedPolicy;
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
    this.pepper = new PepperSecret(this, 'Pepper', { holder: this.database.pepperHolder, existingSecretArn: props.pepperSecretArn });

    this.functions = new McpFunctions(this, 'Functions', {
      database: this.database,
      quotaTable: this.quotaTable,
      pepperSecret: this.pepper.secret,
      pepperAdopted: this.pepper.adopted,
      replacePepper: props.replacePepper,
      guestDailyLimit: props.guestDailyLimit,
      allowedOrigins: props.allowedOrigins,
      driftDemotesConfidence: props.driftDemotesConfidence,
      reranker: props.reranker,
      gatewayConcurrency: props.gatewayConcurrency,
    });

    this.migrations = new Migrations(this, 'Migrations', {
      migrateFunction: this.functions.migrate.function,
      database: this.database,
      pepperSecret: this.pepper.secret,
    });
    // The functions that log in as a database role change only after migrate has created
    // the role and set its password: on the first deploy, and when the role layout changes.
    const { gateway, searchKnowledge, getGuidance, submitFeedback, sourceChecks } = this.functions;
    for (const fn of [gateway, searchKnowledge, getGuidance, submitFeedback, sourceChecks]) fn.function.node.addDependency(this.migrations.resource);

    this.api = new McpApi(this, 'Api', {
      gatewayFunction: this.functions.gatewayAlias,
      siteFunction: this.functions.site.function,
      throttlingRateLimit: props.throttlingRateLimit,
      throttlingBurstLimit: props.throttlingBurstLimit,
      waf: props.waf,
      perIpRateLimit: props.perIpRateLimit,
      cloudWatchRole: props.apiGatewayCloudWatchRole,
      customDomain: props.customDomain,
    });
    // The stack's own domain, then those mapped outside it; a name given as both is listed once.
    const domains = new Set([...(this.api.customDomainName ? [this.api.customDomainName] : []), ...(props.customDomains ?? [])]);
    this.functions.allowHosts([this.api.executeApiHost, ...domains]);

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
      costAnomalyUsd: props.costAnomalyUsd,
      dashboard: props.dashboard,
    });

    this.functions.reportSourceChecksTo(this.operations.topic);
    this.sourceCheckSchedule = new SourceCheckSchedule(this, 'SourceCheckSchedule', {
      function: this.functions.sourceChecks.function,
      schedule: props.sourceCheckSchedule,
    });

    this.outputEndpoints();
    new CfnOutput(this, 'AdminFunctionName', {
      description: 'The owner operations function (invoke with IAM credentials)',
      value: this.functions.admin.function.functionName,
    });
    this.ownerPolicy = this.ownerPolicyFor(this.functions.admin.function.functionArn);
  }

  /**
   * What an owner needs and nothing more: invoking the admin function (every
   * owner command goes through it). Attach it to the owners' users or roles, and
   * keep `lambda:InvokeFunction` on `*` out of everyone else's policies: any
   * principal that may invoke the function is an owner.
   */
  private ownerPolicyFor(adminFunctionArn: string): iam.ManagedPolicy {
    const policy = new iam.ManagedPolicy(this, 'OwnerPolicy', {
      description: `chatctx owners of ${this.stackName}: invoke the admin function, nothing else`,
      statements: [new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [adminFunctionArn] })],
    });
    new CfnOutput(this, 'OwnerPolicyArn', {
      description: 'Attach to the IAM users or roles of the owners (who issue keys and approve records)',
      value: policy.managedPolicyArn,
    });
    return policy;
  }

  /**
   * The MCP URL clients use (on the custom domain when there is one) and, with a
   * custom domain, the execute-api URL (API keys work there; connectors need the
   * domain) and the target its DNS name must point at when the stack does not
   * manage the zone.
   */
  private outputEndpoints(): void {
    new CfnOutput(this, 'McpUrl', { description: 'The MCP endpoint (Streamable HTTP)', value: this.api.publicMcpUrl });
    const domain = this.api.customDomain;
    if (!domain) return;
    new CfnOutput(this, 'ExecuteApiMcpUrl', {
      description: "The MCP endpoint on the API's own host name, with the stage in the path (for API keys; connectors need McpUrl)",
      value: this.api.mcpUrl,
    });
    new CfnOutput(this, 'CustomDomainTarget', {
      description: 'Where the custom domain points: a CNAME to this name, or a Route 53 alias with CustomDomainTargetZoneId',
      value: domain.domainNameAliasDomainName,
    });
    new CfnOutput(this, 'CustomDomainTargetZoneId', {
      description: 'The Route 53 hosted zone id of CustomDomainTarget, for an alias record',
      value: domain.domainNameAliasHostedZoneId,
    });
  }
}
