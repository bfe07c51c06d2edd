/**
 * Lambda entry of the owner operations (keys, records, embeddings). It has no
 * public route: the stack grants invoke to nobody, so only principals with IAM
 * permission to invoke it (the owner's `chatctx --remote FUNCTION …`) reach it.
 * Event: an admin command (`{ "op": "keys.create", … }`); result `{ result }` or
 * `{ error: { code, message, details } }`, the same shape as the local admin endpoint.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { runAdminCommand, type AdminDeps } from '../admin/admin-operations.ts';
import { DataApiSql } from '../storage/data-api-sql.ts';
import { SecretsManagerSecrets } from '../secrets/secrets-manager-secrets.ts';
import { BedrockEmbedder } from '../embeddings/bedrock-embedder.ts';
import { createLambdaObservability } from '../aws/powertools-logger.ts';
import { databaseEnv, requiredEnv } from '../aws/environment.ts';
import { toAppError } from '../errors/app-error.ts';
import { errorKind } from '../observability/logger.ts';

export type AdminResponse = { result: unknown } | { error: { code: string; message: string; details: Record<string, unknown> } };

export function createAdminHandler(deps: AdminDeps, logger = createLambdaObservability('chatctx-admin').logger) {
  return async (command: unknown): Promise<AdminResponse> => {
    const op = command && typeof command === 'object' ? String((command as { op?: unknown }).op) : 'unknown';
    try {
      const result = await runAdminCommand(deps, command);
      logger.info('admin_command', { op, outcome: 'ok' });
      return { result };
    } catch (error) {
      const appError = toAppError(error);
      logger.info('admin_command', { op, outcome: appError.code, error: appError.code === 'internal' ? errorKind(error) : undefined });
      return { error: { code: appError.code, message: appError.message, details: appError.details } };
    }
  };
}

const observability = createLambdaObservability('chatctx-admin');
let admin: ReturnType<typeof createAdminHandler> | undefined;

export const handler = middy(async (command: unknown): Promise<AdminResponse> => {
  if (!admin) {
    const env = process.env;
    const secrets = new SecretsManagerSecrets({ secretId: requiredEnv(env, 'PEPPER_SECRET_ARN') });
    admin = createAdminHandler(
      {
        sql: new DataApiSql(databaseEnv(env)),
        pepper: () => secrets.pepper(),
        embedder: env.EMBEDDINGS_PROVIDER === 'none' ? undefined : new BedrockEmbedder({ modelId: env.BEDROCK_MODEL_ID }),
      },
      observability.logger,
    );
  }
  return admin(command);
}).use(injectLambdaContext(observability.powertools));
