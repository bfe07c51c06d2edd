/**
 * Lambda entry of the scheduled source check (an EventBridge schedule invokes it
 * with no payload that matters): wiring only, see `aws/source-check-job.ts`. It
 * runs as the `chatctx_verifier` database role and fetches public addresses only.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { createLambdaObservability } from '../aws/powertools-logger.ts';
import { dataApiSql, sourceCheckPublisher } from '../aws/aws-adapters.ts';
import { runSourceCheckJob } from '../aws/source-check-job.ts';
import { VERIFY_LIMITS } from '../admin/admin-operations.ts';
import { UntrustedFetcher } from '../streams/untrusted-fetch.ts';

const observability = createLambdaObservability('chatctx-source-checks');

export const handler = middy(() =>
  runSourceCheckJob({
    // A check of the whole corpus is long: the Data API may wait for a paused cluster to resume.
    sql: dataApiSql(process.env, { timeBudgetMs: 60_000 }),
    fetcher: new UntrustedFetcher(),
    publish: sourceCheckPublisher(process.env),
    logger: observability.logger,
    limits: VERIFY_LIMITS,
  }),
).use(injectLambdaContext(observability.powertools));
