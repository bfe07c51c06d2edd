/**
 * The chatctx Lambda functions and exactly the permissions each one needs.
 *
 * | function          | may                                                                                           |
 * |-------------------|-----------------------------------------------------------------------------------------------|
 * | gateway (`/mcp`)  | Data API as `chatctx_gateway`, read the pepper, Get/UpdateItem on the quota table, invoke the three tools |
 * | search_knowledge  | Data API as the tool role, read the pepper, InvokeModel on Titan Text Embeddings V2           |
 * | get_guidance      | Data API as the tool role                                                                     |
 * | submit_feedback   | Data API as the tool role                                                                     |
 * | admin             | Data API as master, read the pepper, InvokeModel on Titan Text Embeddings V2                  |
 * | migrate           | Data API as master, read every role secret of the layout and the pepper, write the tool role's password |
 * | site              | nothing                                                                                       |
 * | source checks     | Data API as the tool role (`chatctx_verifier` with per-function roles), publish to the alarm topic |
 *
 * With `chatctx:reranker` on, search_knowledge may also call the Bedrock Rerank API
 * and invoke that one reranker model (`addReranker`).
 *
 * "The pepper" is read from the tool role's secret (or an adopted secret), so in the
 * default layout every function that logs in as the tool role can read it too; no
 * such role may read API key hashes.
 *
 * "The tool role" is `chatctx_runtime`, shared by the three tools (default), or with
 * per-function roles `chatctx_search`, `chatctx_reader` and `chatctx_feedback`
 * respectively (`lambdas/storage/database-roles.ts` holds their grants; only
 * `chatctx_gateway` may read API keys). "Data API as X" means the rds-data
 * statement/transaction calls on the cluster plus reading X's secret, and no other
 * secret. No function joins the VPC. Wiring to API Gateway is `mcp-api.ts`; running
 * migrate on deploy is `migrations.ts`.
 */
import { ArnFormat, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { bundleModuleBeside, copyFilesAfterBundling } from './bundling.ts';
import { DATABASE_ROLES, databaseRolePurposes, type Database, type DatabaseRolePurpose, type ToolRolePurpose } from './database.ts';
import { ChatctxFunction } from './lambda-function.ts';
import type { QuotaTable } from './quota-table.ts';
import { NO_RERANKER, SETTINGS, TITAN_EMBED_TEXT_V2, parseReranker, settingDefault } from '../lambdas/config/settings.ts';

/** The variable name of a setting the functions read (`lambdas/config/settings.ts`). */
const env = (name: keyof typeof SETTINGS) => SETTINGS[name].env;

/** The handler source of each function, relative to the project root. */
export const FUNCTION_ENTRIES = {
  gateway: 'lambdas/handlers/gateway.ts',
  searchKnowledge: 'lambdas/handlers/search-knowledge.ts',
  getGuidance: 'lambdas/handlers/get-guidance.ts',
  submitFeedback: 'lambdas/handlers/submit-feedback.ts',
  admin: 'lambdas/handlers/admin.ts',
  migrate: 'lambdas/handlers/migrate.ts',
  site: 'lambdas/handlers/site.ts',
  sourceChecks: 'lambdas/handlers/source-checks.ts',
} as const;

/**
 * Files some functions read at run time, copied into their bundles after esbuild:
 * migrate reads `./schema/NNN_name.sql`, and the site's `public-docs.ts` reads its
 * Markdown prose beside the module, i.e. at the bundle root.
 */
export const BUNDLED_FILES = {
  migrate: copyFilesAfterBundling('schema/*.sql', 'schema'),
  site: copyFilesAfterBundling('lambdas/site/*.md', '.'),
  // The tokenizer's tables are parsed only when an answer needs counting, not at cold start.
  searchKnowledge: bundleModuleBeside('gpt-tokenizer'),
} as const;

export interface McpFunctionsProps {
  /** The database the functions use through the Data API. */
  readonly database: Database;

  /** The gateway's quota counters. */
  readonly quotaTable: QuotaTable;

  /** The secret holding the pepper (`{"pepper": …}`): the tool role's, or an adopted one. */
  readonly pepperSecret: secretsmanager.ISecret;

  /**
   * Whether the pepper secret is an adopted one (`chatctx:pepperSecretArn`); migrate
   * then accepts it for a database whose keys predate the pepper fingerprint.
   *
   * @default false
   */
  readonly pepperAdopted?: boolean;

  /**
   * Whether migrate accepts a pepper other than the one the database's keys were
   * made with, revoking them all (the owner's deliberate replacement).
   *
   * @default false
   */
  readonly replacePepper?: boolean;

  /**
   * Tool calls per guest IP per UTC day; 0 means every call needs a key.
   *
   * @default - the `guestDailyLimit` setting's default (`lambdas/config/settings.ts`)
   */
  readonly guestDailyLimit?: number;

  /**
   * Browser origins allowed to call `/mcp` (requests without an `Origin` header are
   * always allowed).
   *
   * @default - none
   */
  readonly allowedOrigins?: readonly string[];

  /**
   * Whether search_knowledge and get_guidance show a record whose quoted evidence
   * drifted with its confidence one step lower.
   *
   * @default false
   */
  readonly driftDemotesConfidence?: boolean;

  /**
   * The Bedrock reranker model search_knowledge sends its best candidates to
   * (`cohere.rerank-v3-5:0`, `amazon.rerank-v1:0`), or `none`.
   *
   * @default 'none'
   */
  readonly reranker?: string;

  /**
   * Concurrent executions reserved for the gateway, which is also the most it may
   * run at once: a flood cannot take the account's whole concurrency (or bill
   * past it). 0 reserves none.
   *
   * @default GATEWAY_CONCURRENCY
   */
  readonly gatewayConcurrency?: number;
}

/**
 * The gateway's default reserved concurrency. The stage lets 50 requests a second
 * through (bursts of 100) and an answer takes well under a second once the cluster
 * is awake; while it resumes calls wait up to about 15 s, so 100 in flight is the
 * stage's burst, and what waits beyond it gets API Gateway's 5xx with Retry-After.
 */
export const GATEWAY_CONCURRENCY = 100;

export class McpFunctions extends Construct {
  /** The MCP gateway behind `/mcp`: transport, auth, quota, tool dispatch. */
  public readonly gateway: ChatctxFunction;
  /**
   * The alias API Gateway invokes: the gateway version published by this deploy,
   * which invokes the tool versions published by the same deploy.
   */
  public readonly gatewayAlias: lambda.Alias;
  /** The `search_knowledge` tool. */
  public readonly searchKnowledge: ChatctxFunction;
  /** The `get_guidance` tool. */
  public readonly getGuidance: ChatctxFunction;
  /** The `submit_feedback` tool. */
  public readonly submitFeedback: ChatctxFunction;
  /** Owner operations (keys, records, embeddings); invoked with IAM credentials only. */
  public readonly admin: ChatctxFunction;
  /** Applies `schema/*.sql` and creates the database roles; run on deploy. */
  public readonly migrate: ChatctxFunction;
  /** Serves the public documentation files. */
  public readonly site: ChatctxFunction;
  /** Checks every quoted excerpt against its page, on a schedule (`lib/source-check-schedule.ts`). */
  public readonly sourceChecks: ChatctxFunction;
  private sourceCheckTopic?: sns.ITopic;
  private allowedHosts?: readonly string[];

  constructor(scope: Construct, id: string, props: McpFunctionsProps) {
    super(scope, id);
    const guestDailyLimit = props.guestDailyLimit ?? settingDefault('guestDailyLimit');
    const allowedOrigins = props.allowedOrigins ?? [];
    validate(guestDailyLimit, allowedOrigins);
    const grants = new Grants(this, props);

    // Tools. Their timeouts stay below the gateway's so the gateway can answer.
    this.searchKnowledge = this.embeddingFunction(grants, 'SearchKnowledge', props.database.toolRole('search'), {
      entry: FUNCTION_ENTRIES.searchKnowledge,
      description: 'chatctx tool search_knowledge',
      timeout: Duration.seconds(20),
      commandHooks: BUNDLED_FILES.searchKnowledge,
    });
    this.getGuidance = this.toolFunction(grants, 'GetGuidance', 'get_guidance', FUNCTION_ENTRIES.getGuidance, 'reader');
    if (props.driftDemotesConfidence) {
      for (const tool of [this.searchKnowledge, this.getGuidance]) tool.function.addEnvironment(env('driftDemotesConfidence'), '1');
    }
    const reranker = rerankerModel(props.reranker);
    if (reranker !== NO_RERANKER) this.addReranker(reranker);
    this.submitFeedback = this.toolFunction(grants, 'SubmitFeedback', 'submit_feedback', FUNCTION_ENTRIES.submitFeedback, 'feedback');
    this.gateway = this.gatewayFunction(grants, props, guestDailyLimit, allowedOrigins);
    this.gatewayAlias = new lambda.Alias(this, 'GatewayLive', { aliasName: 'live', version: this.gateway.function.currentVersion });
    this.admin = this.embeddingFunction(grants, 'Admin', 'master', {
      entry: FUNCTION_ENTRIES.admin,
      description: 'chatctx owner operations (IAM invoke only)',
      timeout: Duration.minutes(15),
    });
    this.migrate = this.migrateFunction(grants, props.database, { adopted: props.pepperAdopted ?? false, replace: props.replacePepper ?? false });
    this.site = new ChatctxFunction(this, 'Site', {
      entry: FUNCTION_ENTRIES.site,
      description: 'chatctx public documentation files',
      memorySize: 256,
      timeout: Duration.seconds(5),
      environment: { [env('guestDailyLimit')]: String(guestDailyLimit) },
      commandHooks: BUNDLED_FILES.site,
    });
    this.sourceChecks = new ChatctxFunction(this, 'SourceChecks', {
      entry: FUNCTION_ENTRIES.sourceChecks,
      description: 'chatctx scheduled check of quoted evidence against its pages',
      memorySize: 512,
      // 243 sources take seconds; a slow host is cut at 20 s per source, and a large corpus has room.
      timeout: Duration.minutes(15),
      environment: grants.databaseEnvironment(props.database.toolRole('verifier')),
    });
    grants.databaseAs(this.sourceChecks, props.database.toolRole('verifier'));
    this.node.addValidation({ validate: () => (this.allowedHosts ? [] : ['the gateway has no allowed hosts: call allowHosts()']) });
    this.node.addValidation({ validate: () => (this.sourceCheckTopic ? [] : ['the source checks have no topic: call reportSourceChecksTo()']) });
  }

  /**
   * A function that embeds with Bedrock and hashes with the pepper (search_knowledge,
   * admin): its database role, the pepper and Titan V2, nothing else.
   */
  private embeddingFunction(
    grants: Grants,
    id: string,
    purpose: SecretPurpose,
    options: { entry: string; description: string; timeout: Duration; commandHooks?: ICommandHooks },
  ): ChatctxFunction {
    const fn = new ChatctxFunction(this, id, {
      ...options,
      memorySize: 1024,
      environment: { ...grants.databaseEnvironment(purpose), [env('pepperSecretArn')]: grants.pepperSecret.secretArn, ...EMBEDDING_ENVIRONMENT },
    });
    grants.databaseAs(fn, purpose);
    grants.pepperSecret.grantRead(fn.role);
    grants.embeddings(fn);
    return fn;
  }

  /**
   * The optional reranker of search_knowledge: its model in the function's environment
   * and the two permissions the Rerank API needs. AWS's "Permissions for reranking in
   * Amazon Bedrock" lists, for reranking used on its own, `bedrock:Rerank` and
   * `bedrock:InvokeModel` "optionally scoped to the reranking models". `bedrock:Rerank`
   * has no resource type to scope it to (the service authorization reference lists
   * it without one; public IAM policies for the Rerank API name "*"), so it gets "*";
   * InvokeModel gets exactly the reranker's foundation-model ARN, the one the adapter
   * names (lambdas/embeddings/bedrock-reranker.ts). A Cohere model is subscribed to
   * through AWS Marketplace once per account by an administrator (docs/aws.md, First
   * deploy); the function gets no Marketplace permission for it.
   *
   * The statements live in a policy of their own, so that the "*" is acknowledged for
   * this reason and not under the X-Ray one every function's default policy carries;
   * the function waits for it, so no version runs without it.
   */
  private addReranker(model: string): void {
    const search = this.searchKnowledge;
    search.function.addEnvironment(env('reranker'), model);
    const policy = new iam.Policy(this, 'SearchRerankPolicy', {
      roles: [search.role],
      statements: [
        new iam.PolicyStatement({ actions: ['bedrock:Rerank'], resources: ['*'] }),
        new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [foundationModelArn(this, model)] }),
      ],
    });
    search.function.node.addDependency(policy);
    Validations.of(policy).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only bedrock:Rerank, which has no resource-level permissions (the Bedrock user guide and the service authorization ' +
        'reference); the model it may run is scoped by the InvokeModel statement beside it, on the reranker model ARN alone.',
    });
  }

  /** A tool that needs nothing but its own database role. */
  private toolFunction(grants: Grants, id: string, tool: string, entry: string, toolPurpose: ToolRolePurpose): ChatctxFunction {
    const purpose = grants.toolRole(toolPurpose);
    const fn = new ChatctxFunction(this, id, {
      entry,
      description: `chatctx tool ${tool}`,
      timeout: Duration.seconds(20),
      environment: grants.databaseEnvironment(purpose),
    });
    grants.databaseAs(fn, purpose);
    return fn;
  }

  /**
   * The gateway invokes each tool by the version this deploy published, never
   * `$LATEST`: a version's ARN is in the gateway's environment, so new tool code
   * makes a new gateway version too, and the alias API Gateway calls moves to it
   * last. During a deploy a request runs old code or new code, never a mix.
   */
  private gatewayFunction(grants: Grants, props: McpFunctionsProps, guestDailyLimit: number, allowedOrigins: readonly string[]): ChatctxFunction {
    const searchKnowledge = this.searchKnowledge.function.currentVersion;
    const getGuidance = this.getGuidance.function.currentVersion;
    const submitFeedback = this.submitFeedback.function.currentVersion;
    const tools = [searchKnowledge, getGuidance, submitFeedback];
    const concurrency = props.gatewayConcurrency ?? GATEWAY_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 0) throw new Error(`gatewayConcurrency must be a whole number of at least 0, got ${concurrency}`);
    // API Gateway gives up after 29 s; the gateway answers before that.
    const fn = new ChatctxFunction(this, 'Gateway', {
      entry: FUNCTION_ENTRIES.gateway,
      description: 'chatctx MCP gateway (/mcp)',
      memorySize: 1024,
      timeout: Duration.seconds(28),
      reservedConcurrentExecutions: concurrency === 0 ? undefined : concurrency,
      environment: {
        ...grants.databaseEnvironment('gateway'),
        [env('quotaTableName')]: props.quotaTable.table.tableName,
        [env('pepperSecretArn')]: grants.pepperSecret.secretArn,
        [env('searchKnowledgeFunction')]: searchKnowledge.functionArn,
        [env('getGuidanceFunction')]: getGuidance.functionArn,
        [env('submitFeedbackFunction')]: submitFeedback.functionArn,
        [env('guestDailyLimit')]: String(guestDailyLimit),
        // Set explicitly so the template shows how long a revoked key may still work.
        [env('keyCacheSeconds')]: String(settingDefault('keyCacheSeconds')),
        [env('allowedOrigins')]: allowedOrigins.join(','),
        [env('oauthRedirectAllowlist')]: settingDefault('oauthRedirectAllowlist').join(','),
      },
    });
    grants.databaseAs(fn, 'gateway');
    grants.pepperSecret.grantRead(fn.role);
    props.quotaTable.grantCounterAccess(fn.role);
    // Exactly these versions: not $LATEST, not other versions.
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: tools.map((version) => version.functionArn) }));
    return fn;
  }

  private migrateFunction(grants: Grants, database: Database, pepper: { adopted: boolean; replace: boolean }): ChatctxFunction {
    const purposes = databaseRolePurposes(database.perFunctionRoles);
    const fn = new ChatctxFunction(this, 'Migrate', {
      entry: FUNCTION_ENTRIES.migrate,
      description: 'chatctx schema migrations and database roles (run on deploy)',
      // A paused cluster takes a few seconds to resume before the first statement.
      timeout: Duration.minutes(5),
      environment: {
        ...grants.databaseEnvironment('master'),
        [env('roleSecretArns')]: Stack.of(this).toJsonString(
          Object.fromEntries(purposes.map((purpose) => [DATABASE_ROLES[purpose], grants.secret(purpose).secretArn])),
        ),
        // Checked against the fingerprint the database keeps of the pepper its keys were made with.
        [env('pepperSecretArn')]: grants.pepperSecret.secretArn,
        [env('pepperAdopted')]: pepper.adopted ? '1' : '0',
        [env('pepperReplace')]: pepper.replace ? '1' : '0',
      },
      commandHooks: BUNDLED_FILES.migrate,
    });
    grants.databaseAs(fn, 'master');
    for (const purpose of purposes) grants.secret(purpose).grantRead(fn.role);
    grants.pepperSecret.grantRead(fn.role);
    // The tool role's secret is generated holding the pepper; migrate writes its password.
    if (purposes.includes('runtime')) {
      fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['secretsmanager:PutSecretValue'], resources: [database.runtimeSecret.secretArn] }));
    }
    return fn;
  }


  /**
   * Sets the `Host` values the gateway accepts (DNS rebinding protection): the API's
   * own execute-api host name and any custom domain names mapped to it. The stack
   * calls this once the API exists: the API's id is known only then, and the
   * RestApi resource itself does not depend on the function (its methods do), so
   * the reference makes no cycle.
   */
  public allowHosts(hosts: readonly string[]): void {
    if (this.allowedHosts) throw new Error('allowHosts may be called once');
    for (const host of hosts) {
      if (!Token.isUnresolved(host) && !HOST_NAME.test(host)) {
        throw new Error(`allowed hosts must be host names like mcp.example.com (no scheme, port, path or "*"), got "${host}"`);
      }
    }
    if (hosts.length === 0) throw new Error('allowHosts needs at least the API\'s own host name');
    this.allowedHosts = [...hosts];
    this.gateway.function.addEnvironment(env('allowedHosts'), hosts.join(','));
  }

  /** Where the source checks report drifted or unreadable sources: the alarm topic, once it exists. */
  public reportSourceChecksTo(topic: sns.ITopic): void {
    if (this.sourceCheckTopic) throw new Error('reportSourceChecksTo may be called once');
    this.sourceCheckTopic = topic;
    this.sourceChecks.function.addEnvironment(env('sourceCheckTopicArn'), topic.topicArn);
    topic.grantPublish(this.sourceChecks.role);
  }

  /** Every function, by its id. */
  public get all(): Readonly<Record<string, ChatctxFunction>> {
    return {
      Gateway: this.gateway,
      SearchKnowledge: this.searchKnowledge,
      GetGuidance: this.getGuidance,
      SubmitFeedback: this.submitFeedback,
      Admin: this.admin,
      Migrate: this.migrate,
      Site: this.site,
      SourceChecks: this.sourceChecks,
    };
  }
}

function validate(guestDailyLimit: number, allowedOrigins: readonly string[]): void {
  if (!Number.isInteger(guestDailyLimit) || guestDailyLimit < 0) {
    throw new Error(`guestDailyLimit must be a whole number of at least 0, got ${guestDailyLimit}`);
  }
  for (const origin of allowedOrigins) {
    if (origin === '*' || !/^https?:\/\/[^/,\s]+$/.test(origin)) {
      throw new Error(`allowedOrigins must list origins like https://example.com (no paths, no "*"), got "${origin}"`);
    }
  }
}

/** The `chatctx:reranker` value, checked as the search function will read it: `none` or a reranker model id. */
function rerankerModel(value: string | undefined): string {
  if (value === undefined) return NO_RERANKER;
  try {
    return parseReranker(value);
  } catch {
    throw new Error(`reranker must be none or a Bedrock reranker model id like cohere.rerank-v3-5:0, got "${value}"`);
  }
}

/** A foundation model's ARN in the stack's region (`arn:<partition>:bedrock:<region>::foundation-model/<model>`). */
function foundationModelArn(scope: Construct, modelId: string): string {
  return Stack.of(scope).formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: modelId, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
}

/** A DNS host name: labels of letters, digits and hyphens, at least one dot. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Bedrock embeddings for queries and records, as the search and admin functions use them. */
const EMBEDDING_ENVIRONMENT = { [env('embeddings')]: 'bedrock', [env('bedrockModelId')]: TITAN_EMBED_TEXT_V2 };

/** The database secret a function connects with: one of the role secrets, or the master's. */
type SecretPurpose = DatabaseRolePurpose | 'master';

/** How the functions get at the database, the pepper and Bedrock: environment and grants in one place. */
class Grants {
  readonly pepperSecret: secretsmanager.ISecret;
  private readonly database: Database;
  private readonly embeddingModelArn: string;

  constructor(scope: Construct, props: McpFunctionsProps) {
    this.database = props.database;
    this.pepperSecret = props.pepperSecret;
    this.embeddingModelArn = Stack.of(scope).formatArn({
      service: 'bedrock',
      account: '',
      resource: 'foundation-model',
      resourceName: TITAN_EMBED_TEXT_V2,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  secret(purpose: SecretPurpose): secretsmanager.ISecret {
    return purpose === 'master' ? this.database.masterSecret : this.database.roleSecret(purpose);
  }

  toolRole(purpose: ToolRolePurpose): DatabaseRolePurpose {
    return this.database.toolRole(purpose);
  }

  /** The Data API settings for connecting as `purpose`'s role. */
  databaseEnvironment(purpose: SecretPurpose): Record<string, string> {
    return {
      [env('dbClusterArn')]: this.database.cluster.clusterArn,
      [env('dbSecretArn')]: this.secret(purpose).secretArn,
      [env('dbName')]: this.database.databaseName,
    };
  }

  /** Data API statements on the cluster, and reading that role's secret only. */
  databaseAs(fn: ChatctxFunction, purpose: SecretPurpose): void {
    this.database.grantDataApi(fn.role);
    this.secret(purpose).grantRead(fn.role);
  }

  embeddings(fn: ChatctxFunction): void {
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [this.embeddingModelArn] }));
  }
}

