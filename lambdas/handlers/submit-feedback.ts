/**
 * Lambda entry of `submit_feedback`: inserts anonymous feedback with a role that
 * can do nothing else.
 */
import { submitFeedbackTool } from '../tools/submit-feedback-tool.ts';
import { toolLambda } from '../aws/tool-lambda.ts';
import { dataApiSql } from '../aws/aws-adapters.ts';

export const handler = toolLambda('chatctx-submit-feedback', (env, logger) => submitFeedbackTool({ sql: dataApiSql(env), logger }));
