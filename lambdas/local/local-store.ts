/**
 * Opens the embedded store in a data directory: creates the directory (0700),
 * opens PGlite with pgvector, applies migrations, and, on the first start of an
 * empty store, loads and approves the starter corpus from `guidance/`.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PgliteSql } from '../storage/pglite-sql.ts';
import { migrate } from '../storage/migrations.ts';
import { FileSecrets } from '../secrets/file-secrets.ts';
import { readRecordFiles } from '../records/record-files.ts';
import { importRecords, type ImportSummary } from '../records/record-import.ts';
import { storePath } from './data-dir.ts';

export const STARTER_CORPUS_DIR = fileURLToPath(new URL('../../guidance/', import.meta.url));

export interface LocalStore {
  readonly sql: PgliteSql;
  readonly secrets: FileSecrets;
  close(): Promise<void>;
}

export async function openLocalStore(dataDir: string): Promise<LocalStore> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const sql = await PgliteSql.open(storePath(dataDir));
  try {
    await migrate(sql);
  } catch (error) {
    await sql.close();
    throw error;
  }
  const secrets = new FileSecrets(dataDir);
  await secrets.pepper();
  return { sql, secrets, close: () => sql.close() };
}

/**
 * Loads the starter corpus once per store. A marker in `settings` records that it
 * happened, so records an owner later deprecates are not brought back.
 */
export async function loadStarterCorpusOnce(store: LocalStore, dir: string = STARTER_CORPUS_DIR): Promise<ImportSummary | undefined> {
  const [done] = await store.sql.query("SELECT 1 FROM settings WHERE key = 'starter_corpus_loaded'");
  if (done) return undefined;
  const records = await readRecordFiles(dir);
  return store.sql.transaction(async (tx) => {
    const summary = await importRecords(tx, records, { approve: true });
    await tx.query("INSERT INTO settings (key, value) VALUES ('starter_corpus_loaded', now()::text) ON CONFLICT (key) DO NOTHING");
    return summary;
  });
}
