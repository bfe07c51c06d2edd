/**
 * Lambda entry of the owner operations (keys, records, embeddings, feedback,
 * analytics). It has no public route: the stack grants invoke to nobody, so only
 * principals with IAM permission to invoke it (`chatctx --remote FUNCTION …`)
 * reach it. Event: an admin command; answer: its envelope
 * (`admin/admin-envelope.ts`).
 */
import type { AdminEnvelope } from '../admin/admin-envelope.ts';
import { runEnveloped, type AdminDeps } from '../admin/admin-operations.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { dataApiSql, lambdaEmbedder, pepperSecrets } from '../aws/aws-adapters.ts';
import { readSetting } from '../config/settings.ts';

export const handler = lambdaEntry('chatctx-admin', (logger) => {
  let deps: AdminDeps | undefined;
  return (command: unknown): Promise<AdminEnvelope> => {
    deps ??= {
      sql: dataApiSql(process.env),
      secrets: pepperSecrets(process.env),
      embedder: lambdaEmbedder(process.env),
      searchEventRetentionDays: readSetting(process.env, 'searchEventRetentionDays'),
    };
    return runEnveloped(deps, command, logger);
  };
});
