/**
 * Lambda entry of the owner operations (keys, records, embeddings, feedback,
 * analytics). It has no public route: the stack grants invoke to nobody, so only
 * principals with IAM permission to invoke it (`chatctx --remote FUNCTION …`)
 * reach it. Event: an admin command; answer: its envelope
 * (`admin/admin-envelope.ts`).
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { AdminEnvelope } from '../admin/admin-envelope.ts';
import { runEnveloped, type AdminDeps } from '../admin/admin-operations.ts';
import { createLambdaObservability } from '../aws/powertools-logger.ts';
import { dataApiSql, lambdaEmbedder, pepperSecrets } from '../aws/aws-adapters.ts';
import { readSetting } from '../config/settings.ts';

const observability = createLambdaObservability('chatctx-admin');
let deps: AdminDeps | undefined;

export const handler = middy((command: unknown): Promise<AdminEnvelope> => {
  deps ??= {
    sql: dataApiSql(process.env),
    secrets: pepperSecrets(process.env),
    embedder: lambdaEmbedder(process.env),
    searchEventRetentionDays: readSetting(process.env, 'searchEventRetentionDays'),
  };
  return runEnveloped(deps, command, observability.logger);
}).use(injectLambdaContext(observability.powertools));
