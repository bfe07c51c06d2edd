/**
 * The AWS runtime's backends for handler tests, started the one way every such
 * test needs them: the Data API stand-in (PGlite behind the real SDK client),
 * dynalite with the quota table, and the environment the stack gives the functions
 * (lib/mcp-functions.ts), by the same setting names, pointing the SDK clients at
 * both. The store is migrated; what goes into it is each test's business.
 *
 * It does not create the Secrets Manager or Lambda mocks: each test file owns its
 * `mockClient`s. `answerInvokes` routes a file's Lambda mock to the real tool entries.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import type { Context } from 'aws-lambda';
import { startDataApiFixture, type DataApiFixture } from './data-api-fixture.ts';
import { createQuotaTable, startDynalite, type Dynalite } from './dynalite.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { SETTINGS, readSetting } from '../../lambdas/config/settings.ts';
import { preparedDump } from './store.ts';

/** The tool function names the gateway invokes. */
export const TOOL_FUNCTIONS = { search_knowledge: 'fn-search', get_guidance: 'fn-guidance', submit_feedback: 'fn-feedback' } as const;
/** The quota table's name. */
export const QUOTA_TABLE = 'quota';

export interface AwsBackends {
  readonly fixture: DataApiFixture;
  readonly dynamo: Dynalite;
  /** The migrated store through the Data API adapter, as the admin function would reach it. */
  readonly sql: DataApiSql;
  close(): Promise<void>;
}

/** Settings by name, overriding the defaults below. */
export type SettingOverrides = Partial<Record<keyof typeof SETTINGS, string>>;

export async function startAwsBackends(overrides: SettingOverrides = {}): Promise<AwsBackends> {
  // From the run's migrated store when there is one: the migration below then finds nothing to do.
  const fixture = await startDataApiFixture({ from: await preparedDump(false) });
  const dynamo = await startDynalite();
  await createQuotaTable(dynamo.client, QUOTA_TABLE);
  const settings: SettingOverrides = {
    dbClusterArn: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx',
    dbSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
    dbName: 'chatctx',
    quotaTableName: QUOTA_TABLE,
    pepperSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:pepper',
    searchKnowledgeFunction: TOOL_FUNCTIONS.search_knowledge,
    getGuidanceFunction: TOOL_FUNCTIONS.get_guidance,
    submitFeedbackFunction: TOOL_FUNCTIONS.submit_feedback,
    allowedHosts: '*',
    ...overrides,
  };
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_RDS_DATA: fixture.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...Object.fromEntries(Object.entries(settings).map(([name, value]) => [SETTINGS[name as keyof typeof SETTINGS].env, value])),
  });
  const sql = new DataApiSql({
    client: new RDSDataClient({}),
    resourceArn: readSetting(process.env, 'dbClusterArn'),
    secretArn: readSetting(process.env, 'dbSecretArn'),
    database: readSetting(process.env, 'dbName'),
  });
  await migrate(sql);
  return {
    fixture,
    dynamo,
    sql,
    close: async () => {
      await fixture.close();
      await dynamo.close();
    },
  };
}

/** A Lambda entry as the Lambda service calls it. */
export type LambdaEntry = (event: unknown, context: Context) => Promise<unknown>;

/** The three tools' real Lambda entries, by the function names the gateway invokes. */
export async function toolEntries(): Promise<Record<string, LambdaEntry>> {
  return {
    [TOOL_FUNCTIONS.search_knowledge]: (await import('../../lambdas/handlers/search-knowledge.ts')).handler as LambdaEntry,
    [TOOL_FUNCTIONS.get_guidance]: (await import('../../lambdas/handlers/get-guidance.ts')).handler as LambdaEntry,
    [TOOL_FUNCTIONS.submit_feedback]: (await import('../../lambdas/handlers/submit-feedback.ts')).handler as LambdaEntry,
  };
}

/**
 * The Lambda service, at the SDK client boundary: each Invoke hands its serialized
 * payload to the named entry and returns the entry's answer serialized, as Lambda
 * does. `around` may wrap each call (count it, spend simulated time).
 */
export function answerInvokes(
  lambda: AwsClientStub<LambdaClient>,
  entries: Record<string, LambdaEntry>,
  context: () => Context,
  around: (name: string, call: () => Promise<unknown>) => Promise<unknown> = (_name, call) => call(),
): void {
  lambda.on(InvokeCommand).callsFake(async (input: { FunctionName: string; Payload: Uint8Array }) => {
    const event = JSON.parse(new TextDecoder().decode(input.Payload)) as unknown;
    const result = await around(input.FunctionName, () => entries[input.FunctionName]!(event, context()));
    return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(result)) };
  });
}
