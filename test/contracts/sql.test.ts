/**
 * The `Sql` contract against every adapter: PGlite in process (the CLI, tests),
 * PGlite on its own thread (the local server), and the Data API adapter through the
 * real AWS SDK client against its PGlite-backed fixture.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { PgliteThreadSql } from '../../lambdas/storage/pglite-thread-sql.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { startDataApiFixture } from '../support/data-api-fixture.ts';
import { describeSqlContract } from './sql.contract.ts';

describeSqlContract('PGlite', async () => {
  const sql = await PgliteSql.open();
  await sql.query('CREATE EXTENSION IF NOT EXISTS vector');
  return { sql, close: () => sql.close() };
});

describeSqlContract('PGlite on its own thread', async () => {
  const sql = await PgliteThreadSql.open();
  await sql.query('CREATE EXTENSION IF NOT EXISTS vector');
  return { sql, close: () => sql.close() };
});

describeSqlContract('RDS Data API', async () => {
  const fixture = await startDataApiFixture();
  await fixture.db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  const client = new RDSDataClient({ endpoint: fixture.endpoint, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' }, maxAttempts: 1 });
  const sql = new DataApiSql({ client, resourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:c', secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:s', database: 'chatctx' });
  return {
    sql,
    close: async () => {
      client.destroy();
      await fixture.close();
    },
  };
});
