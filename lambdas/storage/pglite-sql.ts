/**
 * `Sql` over PGlite (embedded Postgres + pgvector), the local default.
 *
 * PGlite runs in-process and allows one process per data directory; the local
 * server owns it and CLI commands reach it through the admin endpoint while the
 * server runs. This adapter never lets PGlite's error object (which carries the
 * statement and its parameters) escape: it rethrows a `DatabaseError` holding only
 * the SQLSTATE code.
 */
import { vector } from '@electric-sql/pglite-pgvector';
import { PGlite, types } from '@electric-sql/pglite';
import type { QueryOptions, Sql, SqlParam } from '../ports/sql.ts';
import { DatabaseError } from './database-error.ts';
import { normalizeRows } from './row-values.ts';

function sanitize(error: unknown): DatabaseError {
  const code = error && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return new DatabaseError(typeof code === 'string' ? code : undefined);
}

interface Queryable {
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

// Dates stay `YYYY-MM-DD` text, as the Data API sends them (the port's form).
const PARSERS = { [types.DATE]: (value: string) => value };

/** How much memory the store may keep. */
export interface StoreMemory {
  /**
   * Postgres's page cache (`shared_buffers`), in MiB. PGlite's default is 128: the
   * local server's largest single use of memory, which it never gives back once
   * touched. 32 holds the starter corpus's store several times over and answers as
   * fast (docs/testing.md, "A leaner server"); a page beyond it is read from the
   * operating system's file cache, a few microseconds a page.
   * @default 32
   */
  readonly sharedBuffersMb?: number;
}

export const DEFAULT_SHARED_BUFFERS_MB = 32;

/** PGlite's own start parameters, with the page cache of `memory`. */
const startParams = (memory: StoreMemory) => [...PGlite.defaultStartParams, '-c', `shared_buffers=${memory.sharedBuffersMb ?? DEFAULT_SHARED_BUFFERS_MB}MB`];

class PgliteQueries implements Sql {
  constructor(
    protected readonly target: Queryable,
    private readonly runTransaction: <T>(work: (tx: Sql) => Promise<T>) => Promise<T>,
  ) {}

  async query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    let rows: Record<string, unknown>[];
    try {
      rows = (await this.target.query<Record<string, unknown>>(text, [...params])).rows;
    } catch (error) {
      throw sanitize(error);
    }
    return normalizeRows<Row>(rows, options);
  }

  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.runTransaction(work);
  }
}

export class PgliteSql extends PgliteQueries {
  private constructor(readonly db: PGlite) {
    super(db, (work) =>
      db.transaction((tx) => {
        // Nested transactions reuse the open one: PGlite has no savepoint API here.
        const inner: Sql = new PgliteQueries(tx, (nested) => nested(inner));
        return work(inner);
      }),
    );
  }

  /** Opens (or creates) a store; `dataDir` undefined means in-memory, for tests. */
  static async open(dataDir?: string, memory: StoreMemory = {}): Promise<PgliteSql> {
    const db = await PGlite.create({ dataDir, extensions: { vector }, parsers: PARSERS, startParams: startParams(memory) });
    return new PgliteSql(db);
  }

  /**
   * An in-memory store restored from a `dumpDataDir` tarball: tests restore a store
   * prepared once per run instead of initialising and migrating one each time.
   */
  static async fromDump(dump: Blob): Promise<PgliteSql> {
    const db = await PGlite.create({ loadDataDir: dump, extensions: { vector }, parsers: PARSERS, startParams: startParams({}) });
    return new PgliteSql(db);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
