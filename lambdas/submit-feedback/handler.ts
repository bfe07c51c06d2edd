/**
 * Lambda entry of `submit_feedback`: inserts anonymous feedback with a role that
 * can do nothing else.
 */
import { createToolHandlers } from '../tools/tool-handlers.ts';
import { noPepper, toolLambda } from '../tools/tool-lambda.ts';
import { DataApiSql } from '../storage/data-api-sql.ts';
import { databaseEnv } from '../aws/environment.ts';

export const handler = toolLambda('chatctx-submit-feedback', (env, logger) =>
  createToolHandlers({ sql: new DataApiSql(databaseEnv(env)), pepper: noPepper('submit_feedback'), logger }).submit_feedback,
);

