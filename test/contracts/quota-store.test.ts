/**
 * The `QuotaStore` contract against both adapters: the SQL table (on PGlite, as
 * the local server runs it) and DynamoDB (against dynalite, as the gateway runs it).
 */
import { migratedStore } from '../support/store.ts';
import { SqlQuotaStore } from '../../lambdas/quota/sql-quota-store.ts';
import { MirroredQuotaStore } from '../../lambdas/quota/mirrored-quota-store.ts';
import { DynamoQuotaStore } from '../../lambdas/quota/dynamo-quota-store.ts';
import { createQuotaTable, startDynalite } from '../support/dynalite.ts';
import { describeQuotaStoreContract } from './quota-store.contract.ts';

describeQuotaStoreContract('SQL table on PGlite', async () => {
  const sql = await migratedStore(false);
  return { store: new SqlQuotaStore(sql), close: () => sql.close() };
});

describeQuotaStoreContract('SQL table mirrored in memory (the local server)', async () => {
  const sql = await migratedStore(false);
  const counters = new SqlQuotaStore(sql);
  // Mirrors from a day before every day the contract counts, so each read comes from memory.
  const store = await MirroredQuotaStore.open(counters, '2025-01-01', (day) => counters.counters(day));
  return { store, close: () => sql.close() };
});

describeQuotaStoreContract('DynamoDB', async () => {
  const dynamo = await startDynalite();
  await createQuotaTable(dynamo.client, 'quota');
  return { store: new DynamoQuotaStore({ client: dynamo.client, tableName: 'quota' }), close: () => dynamo.close() };
});
