/**
 * What the test run prepares once (see `global-setup.ts`), so that tests whose
 * subject is not a first start do not each pay for one: in-memory stores as PGlite
 * dumps, and a data directory after a first start of the real server. Built from
 * the working tree's schema and starter corpus on every run, never kept between
 * runs, so no test meets a store older than the code.
 *
 * This module must not load `vitest` at run time: the global set-up imports it, and
 * it runs outside the test workers.
 */
import { join } from 'node:path';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the global set-up prepared; absent when a run has no global set-up. */
    chatctxPrepared?: string;
  }
}

/** A migrated in-memory store, with the starter corpus imported and approved unless told not to. */
export async function buildStore(starterCorpus: boolean): Promise<PgliteSql> {
  const sql = await PgliteSql.open();
  await migrate(sql);
  if (starterCorpus) await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  return sql;
}

/** Where, in the prepared folder, the dump of a store built by `buildStore(starterCorpus)` is. */
export const storeDumpPath = (prepared: string, starterCorpus: boolean) => join(prepared, starterCorpus ? 'starter-corpus.tar' : 'migrated.tar');

/** Where, in the prepared folder, the data directory after a first start is. */
export const dataDirTemplatePath = (prepared: string) => join(prepared, 'data-dir');
