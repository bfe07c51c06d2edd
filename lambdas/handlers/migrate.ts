/**
 * Lambda entry of the `migrate` custom resource, run by CloudFormation when the
 * schema or the roles change (see `aws/migrations-resource.ts`). The SQL files are
 * copied beside the bundle at build time (`schema/`): the function applies them,
 * and skips an event that asks for any other schema or pepper secret (a rollback),
 * and refuses a pepper the database's keys were not made with.
 */
import { join } from 'node:path';
import { readSetting } from '../config/settings.ts';
import { migrationsHandler } from '../aws/migrations-resource.ts';
import { dataApiSql, deployedPepper, roleCredentials } from '../aws/aws-adapters.ts';
import { lambdaEntry } from '../aws/lambda-entry.ts';

export const handler = lambdaEntry('chatctx-migrate', (logger) =>
  migrationsHandler({
    schemaDir: join(readSetting(process.env, 'lambdaTaskRoot'), 'schema') + '/',
    sql: () => dataApiSql(process.env, { timeBudgetMs: 60_000 }),
    roles: () => roleCredentials(process.env),
    pepper: () => deployedPepper(process.env),
    logger,
  }),
);
