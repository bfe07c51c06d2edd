/**
 * Lambda entry of `get_guidance`: reads approved records with the read-only role.
 */
import { createToolHandlers } from '../tools/tool-handlers.ts';
import { noPepper, toolLambda } from '../tools/tool-lambda.ts';
import { DataApiSql } from '../storage/data-api-sql.ts';
import { databaseEnv } from '../aws/environment.ts';

export const handler = toolLambda('chatctx-get-guidance', (env, logger) =>
  createToolHandlers({ sql: new DataApiSql(databaseEnv(env)), pepper: noPepper('get_guidance'), logger }).get_guidance,
);

