/**
 * Opens the embedded store of a data directory whose lock the caller holds: checks
 * that what is there is whole, opens PGlite with pgvector and applies migrations;
 * and, on the first start of an empty store, loads and approves the starter corpus
 * from `guidance/`.
 *
 * A store is new only when neither `pgdata/` nor `pepper` exists; then both are
 * created, the pepper first. Anything in between (a store without its pepper, a
 * pepper without its store, `pgdata/` without `PG_VERSION`, a store PGlite cannot
 * open) is refused with a `DataDirError` that says what is wrong and how to recover:
 * creating something new over it would lose the data, or every key.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../ports/sql.ts';
import type { StoreMemory } from '../storage/pglite-sql.ts';
import { PgliteThreadSql } from '../storage/pglite-thread-sql.ts';
import { migrate } from '../storage/migrations.ts';
import { FileSecrets } from '../secrets/file-secrets.ts';
import { readRecordFiles } from '../records/record-files.ts';
import { importRecords, type ImportSummary } from '../records/record-import.ts';
import { gateReports } from '../records/record-approval.ts';
import { readReviewRules } from '../records/quality-gates.ts';
import { errorKind } from '../observability/logger.ts';
import { DataDirError, pepperPath, storePath, type DataDirLock } from './data-dir.ts';
import { fillExcerptHashes } from '../records/source-verification.ts';

export const STARTER_CORPUS_DIR = fileURLToPath(new URL('../../guidance/', import.meta.url));

export interface LocalStore {
  readonly sql: Sql;
  readonly secrets: FileSecrets;
  /** True when this open created the store. */
  readonly created: boolean;
  close(): Promise<void>;
}

const MOVE_AWAY = 'To start over with an empty store instead, move the whole data directory away (keep it until you are sure).';

export interface OpenOptions {
  /**
   * Run PGlite on its own thread, so long statements never hold up the caller's
   * event loop (the server); a CLI command that does one thing runs it in process.
   * @default false
   */
  readonly thread?: boolean;
  /** How much memory the store may keep (the server's `CHATCTX_STORE_BUFFERS_MB`). */
  readonly memory?: StoreMemory;
}

export async function openLocalStore(lock: DataDirLock, options: OpenOptions = {}): Promise<LocalStore> {
  const dataDir = lock.dataDir;
  const created = await isNewStore(dataDir);
  const secrets = new FileSecrets({ path: pepperPath(dataDir), create: created });
  try {
    await secrets.pepper();
  } catch (error) {
    throw new DataDirError((error as Error).message, { cause: error });
  }
  let sql: (Sql & { close(): Promise<void> }) | undefined;
  const pidFile = join(storePath(dataDir), 'postmaster.pid');
  const hadPidFile = await stat(pidFile).then(
    () => true,
    () => false,
  );
  try {
    // PGlite itself is loaded only where it runs: a server's store runs on its own thread, so this one never loads it.
    sql = options.thread
      ? await PgliteThreadSql.open(storePath(dataDir), options.memory)
      : await (await import('../storage/pglite-sql.ts')).PgliteSql.open(storePath(dataDir), options.memory);
    await migrate(sql);
    await fillExcerptHashes(sql);
  } catch (error) {
    await sql?.close().catch(() => undefined);
    // A failed open leaves PGlite's pid file behind; we hold the lock, so no Postgres runs here. Leave the rest as found.
    if (!hadPidFile) await rm(pidFile, { force: true });
    throw new DataDirError(
      `The store in ${storePath(dataDir)} could not be opened (${errorKind(error)}): it may be damaged, for example by ` +
        `a crash or a full disk while writing, or written by another version. Restore the data directory from a backup. ${MOVE_AWAY}`,
      { cause: error },
    );
  }
  const opened = sql;
  return { sql: opened, secrets, created, close: () => opened.close() };
}

/** Whether the directory holds no store yet; throws when it holds part of one. */
async function isNewStore(dataDir: string): Promise<boolean> {
  const store = storePath(dataDir);
  const storeFiles = await readdir(store).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  const hasPepper = await stat(pepperPath(dataDir)).then(
    () => true,
    () => false,
  );
  if (storeFiles.length === 0) {
    if (!hasPepper) return true;
    throw new DataDirError(
      `${dataDir} has a pepper but no store (${store} is missing or empty): the database was deleted or the data ` +
        `directory is incomplete. Restore ${store} from a backup. ${MOVE_AWAY}`,
    );
  }
  if (!storeFiles.includes('PG_VERSION')) {
    throw new DataDirError(
      `The store in ${store} is damaged: ${join(store, 'PG_VERSION')} is missing, so it cannot be told from an empty ` +
        `folder and would be re-initialised over your data. Restore the data directory from a backup. ${MOVE_AWAY}`,
    );
  }
  return false;
}

/**
 * Loads the starter corpus once per store. A marker in `settings` records that it
 * happened, so records an owner later deprecates are not brought back.
 */
export async function loadStarterCorpusOnce(store: LocalStore, dir: string = STARTER_CORPUS_DIR): Promise<ImportSummary | undefined> {
  const [done] = await store.sql.query("SELECT 1 FROM settings WHERE key = 'starter_corpus_loaded'");
  if (done) return undefined;
  const records = await readRecordFiles(dir);
  // The starter corpus ships reviewed: its gate report is kept with each approval, but a gate
  // that fails years after release (freshness) must not stop a first start.
  const reports = await gateReports(store.sql, records, readReviewRules(process.env));
  const approval = { reviewer: 'starter corpus', reports: new Map(reports.map((r) => [r.slug, r])), overrides: new Map() };
  return store.sql.transaction(async (tx) => {
    const summary = await importRecords(tx, records, { approve: true, approval });
    await tx.query("INSERT INTO settings (key, value) VALUES ('starter_corpus_loaded', now()::text) ON CONFLICT (key) DO NOTHING");
    return summary;
  });
}
