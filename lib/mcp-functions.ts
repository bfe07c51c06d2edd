/**
 * The chatctx Lambda functions and exactly the permissions each one needs.
 *
 * | function          | may                                                                                           |
 * |-------------------|-----------------------------------------------------------------------------------------------|
 * | gateway (`/mcp`)  | Data API as `chatctx_gateway`, read the pepper, Get/UpdateItem on the quota table, invoke the three tools |
 * | search_knowledge  | Data API as `chatctx_search`, read the pepper, InvokeModel on Titan Text Embeddings V2        |
 * | get_guidance      | Data API as `chatctx_reader`                                                                  |
 * | submit_feedback   | Data API as `chatctx_feedback`                                                                |
 * | admin             | Data API as master, read the pepper, InvokeModel on Titan Text Embeddings V2                  |
 * | migrate           | Data API as master, read every role secret                                                    |
 * | site              | nothing                                                                                       |
 *
 * "Data API as X" means the rds-data statement/transaction calls on the cluster plus
 * reading X's secret, and no other secret. No function joins the VPC. Wiring to
 * API Gateway is `mcp-api.ts`; running migrate on deploy is `migrations.ts`.
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { copyFilesAfterBundling } from './bundling.ts';
import { DATABASE_ROLES, type Database, type DatabaseRolePurpose } from './database.ts';
import { ChatctxFunction } from './lambda-function.ts';
import type { QuotaTable } from './quota-table.ts';

/** The Bedrock model that embeds queries and records (512 dimensions). */
export const EMBEDDING_MODEL_ID = 'amazon.titan-embed-text-v2:0';

/** The handler source of each function, relative to the project root. */
export const FUNCTION_ENTRIES = {
  gateway: 'lambdas/handlers/gateway.ts',
  searchKnowledge: 'lambdas/handlers/search-knowledge.ts',
  getGuidance: 'lambdas/handlers/get-guidance.ts',
  submitFeedback: 'lambdas/handlers/submit-feedback.ts',
  admin: 'lambdas/handlers/admin.ts',
  migrate: 'lambdas/handlers/migrate.ts',
  site: 'lambdas/handlers/site.ts',
} as const;

/**
 * Files some functions read at run time, copied into their bundles after esbuild:
 * migrate reads `./schema/NNN_name.sql`, and the site's `public-docs.ts` reads its
 * Markdown prose beside the module, i.e. at the bundle root.
 */
export const BUNDLED_FILES = {
  migrate: copyFilesAfterBundling('schema/*.sql', 'schema'),
  site: copyFilesAfterBundling('lambdas/site/*.md', '.'),
} as const;

export interface McpFunctionsProps {
  /** The database the functions use through the Data API. */
  readonly database: Database;

  /** The gateway's quota counters. */
  readonly quotaTable: QuotaTable;

  /** The pepper secret (`{"pepper": …}`). */
  readonly pepperSecret: secretsmanager.ISecret;

  /**
   * Tool calls per guest IP per UTC day; 0 means every call needs a key.
   *
   * @default 250
   */
  readonly guestDailyLimit?: number;

  /**
   * Browser origins allowed to call `/mcp` (requests without an `Origin` header are
   * always allowed).
   *
   * @default - none
   */
  readonly allowedOrigins?: readonly string[];
}

export class McpFunctions extends Construct {
  /** The MCP gateway behind `/mcp`: transport, auth, quota, tool dispatch. */
  public readonly gateway: ChatctxFunction;
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

  constructor(scope: Construct, id: string, props: McpFunctionsProps) {
    super(scope, id);
    const guestDailyLimit = props.guestDailyLimit ?? 250;
    const allowedOrigins = props.allowedOrigins ?? [];
    validate(guestDailyLimit, allowedOrigins);

    const { database, pepperSecret } = props;
    const dbEnvironment = (secret: secretsmanager.ISecret) => ({
      DB_CLUSTER_ARN: database.cluster.clusterArn,
      DB_SECRET_ARN: secret.secretArn,
      DB_NAME: database.databaseName,
    });
    const embeddingEnvironment = { EMBEDDINGS_PROVIDER: 'bedrock', BEDROCK_MODEL_ID: EMBEDDING_MODEL_ID };
    const embeddingModelArn = Stack.of(this).formatArn({
      service: 'bedrock',
      account: '',
      resource: 'foundation-model',
      resourceName: EMBEDDING_MODEL_ID,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const grantEmbeddings = (fn: ChatctxFunction) =>
      fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [embeddingModelArn] }));
    const grantDatabaseAs = (fn: ChatctxFunction, secret: secretsmanager.ISecret) => {
      database.grantDataApi(fn.role);
      secret.grantRead(fn.role);
    };
    const roleSecret = (purpose: DatabaseRolePurpose) => database.roleSecrets[purpose];

    // Tools. Their timeouts stay below the gateway's so the gateway can answer.
    this.searchKnowledge = new ChatctxFunction(this, 'SearchKnowledge', {
      entry: FUNCTION_ENTRIES.searchKnowledge,
      description: 'chatctx tool search_knowledge',
      memorySize: 1024,
      timeout: Duration.seconds(20),
      environment: {
        ...dbEnvironment(roleSecret('search')),
        PEPPER_SECRET_ARN: pepperSecret.secretArn,
        ...embeddingEnvironment,
      },
    });
    grantDatabaseAs(this.searchKnowledge, roleSecret('search'));
    pepperSecret.grantRead(this.searchKnowledge.role);
    grantEmbeddings(this.searchKnowledge);

    this.getGuidance = new ChatctxFunction(this, 'GetGuidance', {
      entry: FUNCTION_ENTRIES.getGuidance,
      description: 'chatctx tool get_guidance',
      timeout: Duration.seconds(20),
      environment: dbEnvironment(roleSecret('reader')),
    });
    grantDatabaseAs(this.getGuidance, roleSecret('reader'));

    this.submitFeedback = new ChatctxFunction(this, 'SubmitFeedback', {
      entry: FUNCTION_ENTRIES.submitFeedback,
      description: 'chatctx tool submit_feedback',
      timeout: Duration.seconds(20),
      environment: dbEnvironment(roleSecret('feedback')),
    });
    grantDatabaseAs(this.submitFeedback, roleSecret('feedback'));

    const tools = [this.searchKnowledge, this.getGuidance, this.submitFeedback];

    // API Gateway gives up after 29 s; the gateway answers before that.
    this.gateway = new ChatctxFunction(this, 'Gateway', {
      entry: FUNCTION_ENTRIES.gateway,
      description: 'chatctx MCP gateway (/mcp)',
      memorySize: 1024,
      timeout: Duration.seconds(28),
      environment: {
        ...dbEnvironment(roleSecret('gateway')),
        QUOTA_TABLE_NAME: props.quotaTable.table.tableName,
        PEPPER_SECRET_ARN: pepperSecret.secretArn,
        TOOL_FUNCTION_SEARCH_KNOWLEDGE: this.searchKnowledge.function.functionName,
        TOOL_FUNCTION_GET_GUIDANCE: this.getGuidance.function.functionName,
        TOOL_FUNCTION_SUBMIT_FEEDBACK: this.submitFeedback.function.functionName,
        GUEST_DAILY_LIMIT: String(guestDailyLimit),
        // API Gateway only routes requests for its own host names to the function.
        ALLOWED_HOSTS: '*',
        ALLOWED_ORIGINS: allowedOrigins.join(','),
      },
    });
    grantDatabaseAs(this.gateway, roleSecret('gateway'));
    pepperSecret.grantRead(this.gateway.role);
    props.quotaTable.grantCounterAccess(this.gateway.role);
    // Unqualified function ARNs only (no `:*`): the gateway invokes $LATEST by name.
    this.gateway.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: tools.map((tool) => tool.function.functionArn),
      }),
    );

    this.admin = new ChatctxFunction(this, 'Admin', {
      entry: FUNCTION_ENTRIES.admin,
      description: 'chatctx owner operations (IAM invoke only)',
      memorySize: 1024,
      timeout: Duration.minutes(15),
      environment: {
        ...dbEnvironment(database.masterSecret),
        PEPPER_SECRET_ARN: pepperSecret.secretArn,
        ...embeddingEnvironment,
      },
    });
    grantDatabaseAs(this.admin, database.masterSecret);
    pepperSecret.grantRead(this.admin.role);
    grantEmbeddings(this.admin);

    this.migrate = new ChatctxFunction(this, 'Migrate', {
      entry: FUNCTION_ENTRIES.migrate,
      description: 'chatctx schema migrations and database roles (run on deploy)',
      // A paused cluster takes a few seconds to resume before the first statement.
      timeout: Duration.minutes(5),
      environment: {
        ...dbEnvironment(database.masterSecret),
        ROLE_SECRET_ARNS: Stack.of(this).toJsonString(
          Object.fromEntries(
            (Object.keys(DATABASE_ROLES) as DatabaseRolePurpose[]).map((purpose) => [
              DATABASE_ROLES[purpose],
              roleSecret(purpose).secretArn,
            ]),
          ),
        ),
      },
      commandHooks: BUNDLED_FILES.migrate,
    });
    grantDatabaseAs(this.migrate, database.masterSecret);
    for (const purpose of Object.keys(DATABASE_ROLES) as DatabaseRolePurpose[]) roleSecret(purpose).grantRead(this.migrate.role);

    this.site = new ChatctxFunction(this, 'Site', {
      entry: FUNCTION_ENTRIES.site,
      description: 'chatctx public documentation files',
      memorySize: 256,
      timeout: Duration.seconds(5),
      environment: { GUEST_DAILY_LIMIT: String(guestDailyLimit) },
      commandHooks: BUNDLED_FILES.site,
    });
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
