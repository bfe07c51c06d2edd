/**
 * The AWS adapters behind the ports, built from the Lambda's settings
 * (`config/settings.ts`): each Lambda entry asks here for what it uses, once per
 * cold start. A missing or bad setting fails the cold start with a `ConfigError`
 * naming the variable.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { ConfigError, NO_RERANKER, SETTINGS, readSetting, readSettings, type Environment } from '../config/settings.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Reranker } from '../ports/reranker.ts';
import { DataApiSql, type DataApiSqlOptions } from '../storage/data-api-sql.ts';
import { INVOCATION_CLOCK, currentDeadline } from './invocation-deadline.ts';
import { SecretsManagerSecrets, readRoleCredentials } from '../secrets/secrets-manager-secrets.ts';
import type { DeployedPepper } from './migrations-resource.ts';
import type { RoleCredentials } from '../ports/secrets.ts';
import { BedrockEmbedder } from '../embeddings/bedrock-embedder.ts';
import { BedrockReranker } from '../embeddings/bedrock-reranker.ts';
import { DynamoQuotaStore } from '../quota/dynamo-quota-store.ts';
import type { LambdaToolName } from './lambda-tool-invoker.ts';

/**
 * The Data API connection as this function's own database role. Its retries stop at
 * the running invocation's deadline (`invocation-deadline.ts`); outside one (the
 * migrate and admin functions), after `timeBudgetMs`.
 */
export function dataApiSql(env: Environment, options: Pick<DataApiSqlOptions, 'timeBudgetMs' | 'deadline'> = {}): DataApiSql {
  const s = readSettings(env, ['dbClusterArn', 'dbSecretArn', 'dbName']);
  return new DataApiSql({
    resourceArn: s.dbClusterArn,
    secretArn: s.dbSecretArn,
    database: s.dbName,
    deadline: currentDeadline,
    clock: INVOCATION_CLOCK,
    ...options,
  });
}

export function pepperSecrets(env: Environment): SecretsManagerSecrets {
  return new SecretsManagerSecrets({ secretId: readSetting(env, 'pepperSecretArn') });
}

/** Bedrock, or none; the bundled encoder is never part of a Lambda bundle. */
export function lambdaEmbedder(env: Environment): Embedder | undefined {
  const provider = readSetting(env, 'embeddings');
  if (provider === 'none') return undefined;
  if (provider === 'use-lite') {
    throw new ConfigError(SETTINGS.embeddings.env, `${SETTINGS.embeddings.env}=use-lite is not available on Lambda; use bedrock or none.`);
  }
  return new BedrockEmbedder({ modelId: readSetting(env, 'bedrockModelId') });
}

/**
 * The search function's rerank step: the Bedrock reranker `CHATCTX_RERANKER` names,
 * its deadline and how many candidates it reads; nothing when the setting is `none`.
 */
export function lambdaRerankStep(env: Environment): { reranker?: Reranker; rerankTimeoutMs?: number; rerankCandidates?: number } {
  const model = readSetting(env, 'reranker');
  if (model === NO_RERANKER) return {};
  const s = readSettings(env, ['rerankTimeoutMs', 'rerankCandidates']);
  return { reranker: new BedrockReranker({ modelId: model }), rerankTimeoutMs: s.rerankTimeoutMs, rerankCandidates: s.rerankCandidates };
}

export function quotaStore(env: Environment): DynamoQuotaStore {
  return new DynamoQuotaStore({ tableName: readSetting(env, 'quotaTableName') });
}

/** The function that runs each tool. */
export function toolFunctionNames(env: Environment): Record<LambdaToolName, string> {
  const s = readSettings(env, ['searchKnowledgeFunction', 'getGuidanceFunction', 'submitFeedbackFunction']);
  return { search_knowledge: s.searchKnowledgeFunction, get_guidance: s.getGuidanceFunction, submit_feedback: s.submitFeedbackFunction };
}

/**
 * Each database role's credentials, from the secrets the stack made for them; a
 * secret without a password yet (the tool role's, which the stack generates
 * holding the pepper) gets one written (migrate only).
 */
export function roleCredentials(env: Environment, client = new SecretsManagerClient({})): Promise<Record<string, RoleCredentials>> {
  return readRoleCredentials(client, readSetting(env, 'roleSecretArns'), { fillMissingPasswords: true });
}

/** The pepper the deployed functions use, as migrate checks it against the database's fingerprint. */
export function deployedPepper(env: Environment): DeployedPepper {
  const secretArn = readSetting(env, 'pepperSecretArn');
  const secrets = new SecretsManagerSecrets({ secretId: secretArn });
  return {
    secretArn,
    source: readSetting(env, 'pepperAdopted') ? 'adopted' : 'stack',
    replace: readSetting(env, 'pepperReplace'),
    read: () => secrets.pepper(),
  };
}

/** Publishes to the source check's SNS topic (`CHATCTX_SOURCE_CHECK_TOPIC_ARN`). */
export function sourceCheckPublisher(env: Environment, client = new SNSClient({})): (subject: string, message: string) => Promise<void> {
  const topicArn = readSetting(env, 'sourceCheckTopicArn');
  return async (subject, message) => {
    // SNS refuses a subject over 100 characters.
    await client.send(new PublishCommand({ TopicArn: topicArn, Subject: subject.slice(0, 100), Message: message }));
  };
}
