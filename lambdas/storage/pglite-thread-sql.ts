/**
 * `Sql` over PGlite running on its own thread (`pglite-thread.ts`): the local
 * server's store. PGlite executes a statement synchronously inside WebAssembly and
 * resolves its promises without ever yielding to the event loop, so in-process a
 * 2,000-record import stops every HTTP answer for the whole import. Here the
 * statements run on the store's thread; the calling thread only waits for replies.
 *
 * Same contract as `PgliteSql` (`test/contracts/sql.test.ts` runs both): row values,
 * transactions (statements of a transaction run in order; others wait until it
 * ends, as on one connection), and `DatabaseError`s with the SQLSTATE only.
 */
import { Worker } from 'node:worker_threads';
import type { QueryOptions, Sql, SqlParam } from '../ports/sql.ts';
import { DatabaseError } from './database-error.ts';
import { SpareThread } from '../threads/spare-thread.ts';
import type { ThreadReply, ThreadRequest } from './pglite-thread.ts';
import type { StoreMemory } from './pglite-sql.ts';

export const STORE_WORKER_URL = new URL('./pglite-thread.mjs', import.meta.url);

/** The store's thread, started ahead by `chatctx serve` so that PGlite's modules load beside the server's (`SpareThread`). */
const storeThread = new SpareThread(STORE_WORKER_URL);
/** Starts the store's thread now; the next `PgliteThreadSql.open` takes it. */
export const startStoreThread = (): void => storeThread.start();
/** Stops a store thread that nobody took. */
export const dropStoreThread = (): Promise<void> => storeThread.drop();

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export class PgliteThreadSql implements Sql {
  private readonly pending = new Map<number, { resolve(rows: unknown[] | undefined): void; reject(error: Error): void }>();
  private nextId = 1;
  private stopped: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: ThreadReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!waiting) return;
      if (reply.error) waiting.reject(toError(reply.error));
      else waiting.resolve(reply.rows);
    });
    const stop = (error: Error) => {
      this.stopped = error;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', (error) => stop(new Error(`The store's thread failed (${error.name}).`)));
    worker.on('exit', (code) => stop(new Error(`The store's thread exited (code ${code}).`)));
  }

  /** Starts the thread and opens (or creates) the store; `dataDir` undefined means in-memory. */
  static async open(dataDir?: string, memory: StoreMemory = {}): Promise<PgliteThreadSql> {
    // A thread started ahead is unreferenced while it waits; an open store keeps the process alive, as a new thread would.
    const spare = storeThread.take();
    spare?.ref();
    const sql = new PgliteThreadSql(spare ?? new Worker(STORE_WORKER_URL));
    try {
      await sql.send({ type: 'open', dataDir, memory });
    } catch (error) {
      await sql.worker.terminate();
      throw error;
    }
    return sql;
  }

  async query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    return (await this.send({ type: 'query', text, params, options })) as Row[];
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    // The transaction is known by the id of its `begin`.
    const txId = this.nextId;
    await this.send({ type: 'begin' });
    const tx: Sql = {
      query: async <Row>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}) =>
        (await this.send({ type: 'query', text, params, options, tx: txId })) as Row[],
      // Nested transactions reuse the open one, as the in-process adapter does.
      transaction: (nested) => nested(tx),
    };
    let result: T;
    try {
      result = await work(tx);
    } catch (error) {
      await this.send({ type: 'rollback', tx: txId }).catch(() => undefined);
      throw error;
    }
    await this.send({ type: 'commit', tx: txId });
    return result;
  }

  async close(): Promise<void> {
    if (!this.stopped) await this.send({ type: 'close' }).catch(() => undefined);
    await this.worker.terminate();
  }

  private send(request: Request): Promise<unknown[] | undefined> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }
}

function toError(error: NonNullable<ThreadReply['error']>): Error {
  if (error.name === 'DatabaseError' || error.code) return new DatabaseError(error.code);
  return Object.assign(new Error(`The store's thread failed (${error.name}).`), { name: error.name });
}
