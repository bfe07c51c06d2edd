/**
 * Lambda entry of `get_guidance`: reads approved records with the read-only role.
 */
import { getGuidanceTool } from '../tools/get-guidance-tool.ts';
import { toolLambda } from '../aws/tool-lambda.ts';
import { dataApiSql } from '../aws/aws-adapters.ts';
import { readSetting } from '../config/settings.ts';

export const handler = toolLambda('chatctx-get-guidance', (env, logger) =>
  getGuidanceTool({ sql: dataApiSql(env), logger, driftDemotesConfidence: readSetting(env, 'driftDemotesConfidence') }),
);
