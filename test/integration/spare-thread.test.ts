/**
 * A thread started ahead (lambdas/threads/spare-thread.ts) is handed out once, only
 * while it runs, and stopped when nobody takes it; `chatctx serve` starts the store's
 * and the encoder's this way (lambdas/local/serve-head-start.ts), and opening the store
 * and embedding then use them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { SpareThread } from '../../lambdas/threads/spare-thread.ts';
import { startServeThreads } from '../../lambdas/local/serve-head-start.ts';
import { dropStoreThread, PgliteThreadSql } from '../../lambdas/storage/pglite-thread-sql.ts';
import { dropEncoderThread, takeEncoderThread } from '../../lambdas/embeddings/encoder-head-start.ts';
import { WorkerPoolEmbedder } from '../../lambdas/embeddings/worker-pool-embedder.ts';

/** A thread that answers each message with the same text in capitals. */
const ECHO = new URL(`data:text/javascript,${encodeURIComponent("import { parentPort } from 'node:worker_threads'; parentPort.on('message', (m) => parentPort.postMessage(String(m).toUpperCase()));")}`);
/** A thread that ends at once. */
const QUITTER = new URL(`data:text/javascript,${encodeURIComponent('process.exit(3);')}`);

const ask = (worker: Worker, text: string) => new Promise<string>((resolve) => {
  worker.once('message', resolve);
  worker.postMessage(text);
});
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('a spare thread', () => {
  it('is started once however often it is asked for, and handed out once, running', async () => {
    const spare = new SpareThread(ECHO);
    spare.start();
    spare.start();
    const worker = spare.take()!;
    cleanups.push(() => worker.terminate());
    expect(spare.take()).toBeUndefined();
    expect(await ask(worker, 'ready')).toBe('READY');
  });

  it('is not handed out once it has ended; the caller starts its own', async () => {
    const spare = new SpareThread(QUITTER);
    spare.start();
    expect(spare.waiting).toBe(true);
    // However long the thread takes to start and end on a busy machine.
    await vi.waitFor(() => expect(spare.waiting).toBe(false), { timeout: 60_000, interval: 20 });
    expect(spare.take()).toBeUndefined();
  }, 90_000);

  it('is stopped by drop when nobody takes it, and a new one can wait after', async () => {
    const spare = new SpareThread(ECHO);
    spare.start();
    await spare.drop();
    expect(spare.take()).toBeUndefined();
    spare.start();
    const again = spare.take()!;
    cleanups.push(() => again.terminate());
    expect(await ask(again, 'again')).toBe('AGAIN');
  });
});

describe("chatctx serve's threads started ahead", () => {
  it('open the store and embed, as threads started on demand do', async () => {
    // Prepare
    startServeThreads();
    cleanups.push(dropStoreThread, dropEncoderThread);

    // Act
    const store = await PgliteThreadSql.open();
    cleanups.push(() => store.close());
    const pool = new WorkerPoolEmbedder(1);
    cleanups.push(() => pool.close());
    const [vector] = await pool.embed(['close database pools on shutdown']);

    // Assess: both were used (nothing is left waiting) and both work.
    expect(await store.query<{ n: number }>('SELECT 41 + 1 AS n')).toEqual([{ n: 42 }]);
    expect(vector).toHaveLength(512);
    expect(takeEncoderThread()).toBeUndefined();
  }, 120_000);
});
