/**
 * Lambda entry of the scheduled source check (an EventBridge schedule invokes it
 * with no payload that matters): wiring only, see `aws/source-check-job.ts`. It
 * runs as the `chatctx_verifier` database role and fetches public addresses only.
 */
import { lambdaEntry } from '../aws/lambda-entry.ts';
import { dataApiSql, sourceCheckPublisher } from '../aws/aws-adapters.ts';
import { runSourceCheckJob } from '../aws/source-check-job.ts';
import { VERIFY_LIMITS } from '../admin/admin-operations.ts';
import { UntrustedFetcher } from '../streams/untrusted-fetch.ts';

export const handler = lambdaEntry('chatctx-source-checks', (logger) => () =>
  runSourceCheckJob({
    // A check of the whole corpus is long: the Data API may wait for a paused cluster to resume.
    sql: dataApiSql(process.env, { timeBudgetMs: 60_000 }),
    fetcher: new UntrustedFetcher(),
    publish: sourceCheckPublisher(process.env),
    logger,
    limits: VERIFY_LIMITS,
  }),
);
