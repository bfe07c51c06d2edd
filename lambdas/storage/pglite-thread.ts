/**
 * The body of the store's own thread (`pglite-thread-sql.ts`): one PGlite, driven
 * by messages. A statement runs here, so however long it takes, the thread that
 * answers HTTP keeps answering.
 *
 * In: `open`, `query` (optionally inside a transaction), `begin`, `commit`,
 * `rollback`, `close`, each with an `id`. Out: `{ id, rows }`, `{ id }` or
 * `{ id, error: { name, code } }`, never an error's message (PGlite's carry
 * statements and their values).
 */
import { parentPort } from 'node:worker_threads';
import type { QueryOptions, Sql, SqlParam } from '../ports/sql.ts';
import { PgliteSql, type StoreMemory } from './pglite-sql.ts';

export type ThreadRequest =
  | { readonly type: 'open'; readonly id: number; readonly dataDir?: string; readonly memory?: StoreMemory }
  | { readonly type: 'query'; readonly id: number; readonly text: string; readonly params: readonly SqlParam[]; readonly options: QueryOptions; readonly tx?: number }
  | { readonly type: 'begin'; readonly id: number }
  | { readonly type: 'commit' | 'rollback'; readonly id: number; readonly tx: number }
  | { readonly type: 'close'; readonly id: number };

export type ThreadReply = { readonly id: number; readonly rows?: unknown[]; readonly error?: { readonly name: string; readonly code?: string } };

const port = parentPort!;
let sql: PgliteSql | undefined;
/** Open transactions: the statements waiting to run in each, and how each ends. */
const transactions = new Map<number, { queue: ThreadRequest[]; wake?: () => void }>();

const reply = (message: ThreadReply) => port.postMessage(message);
const failure = (id: number, error: unknown): ThreadReply => {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return { id, error: { name: typeof name === 'string' ? name : 'Error', code: typeof code === 'string' ? code : undefined } };
};

async function run(target: Sql, request: Extract<ThreadRequest, { type: 'query' }>): Promise<void> {
  try {
    reply({ id: request.id, rows: await target.query(request.text, request.params, request.options) });
  } catch (error) {
    reply(failure(request.id, error));
  }
}

/** Holds a transaction open, running its statements as they arrive, until commit or rollback. */
function begin(id: number): void {
  const open = { queue: [] as ThreadRequest[], wake: undefined as (() => void) | undefined };
  transactions.set(id, open);
  const next = () => new Promise<void>((resolve) => (open.wake = resolve));
  let commitId: number | undefined;
  const ended = sql!.transaction(async (tx) => {
    reply({ id });
    for (;;) {
      const request = open.queue.shift();
      if (!request) {
        await next();
        continue;
      }
      if (request.type === 'query') await run(tx, request);
      else if (request.type === 'commit') return (commitId = request.id);
      else throw Object.assign(new Error('rollback'), { name: 'Rollback', rollbackId: request.id });
    }
  });
  ended.then(
    (commitId) => {
      transactions.delete(id);
      reply({ id: commitId });
    },
    (error: { name?: string; rollbackId?: number }) => {
      transactions.delete(id);
      // A rollback the caller asked for is its answer; a failed COMMIT is reported to the commit.
      if (error.rollbackId !== undefined) reply({ id: error.rollbackId });
      else if (commitId !== undefined) reply(failure(commitId, error));
    },
  );
}

port.on('message', (request: ThreadRequest) => {
  switch (request.type) {
    case 'open':
      PgliteSql.open(request.dataDir, request.memory).then(
        (opened) => {
          sql = opened;
          reply({ id: request.id });
        },
        (error) => reply(failure(request.id, error)),
      );
      return;
    case 'query':
    case 'commit':
    case 'rollback': {
      const tx = 'tx' in request && request.tx !== undefined ? transactions.get(request.tx) : undefined;
      if (tx) {
        tx.queue.push(request);
        tx.wake?.();
      } else if (request.type === 'query' && !('tx' in request && request.tx !== undefined)) void run(sql!, request);
      else reply(failure(request.id, { name: 'TransactionEnded' }));
      return;
    }
    case 'begin':
      begin(request.id);
      return;
    case 'close':
      (sql?.close() ?? Promise.resolve()).then(
        () => reply({ id: request.id }),
        (error) => reply(failure(request.id, error)),
      );
      return;
  }
});
