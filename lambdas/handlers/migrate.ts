/**
 * Lambda entry of the `migrate` custom resource, run by CloudFormation when the
 * schema or the roles change (see `aws/migrations-resource.ts`). The SQL files are
 * copied beside the bundle at build time (`schema/`).
 */
import { join } from 'node:path';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { readSetting } from '../config/settings.ts';
import { onMigrationsEvent, runMigrations } from '../aws/migrations-resource.ts';
import { dataApiSql, roleCredentials } from '../aws/aws-adapters.ts';

export const handler = (event: CloudFormationCustomResourceEvent) =>
  onMigrationsEvent(event, async () =>
    runMigrations(
      dataApiSql(process.env, { timeBudgetMs: 60_000 }),
      join(readSetting(process.env, 'lambdaTaskRoot'), 'schema') + '/',
      await roleCredentials(process.env),
    ),
  );
