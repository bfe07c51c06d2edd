/**
 * USE-lite on several worker threads, for bulk embedding in the evaluation: the
 * encoder is single-threaded JavaScript, so a 2-core machine embeds a corpus about
 * twice as fast with two workers. Same model and outputs as `UseLiteEmbedder`.
 * Each worker starts from a small .mjs entry that registers tsx (loader hooks do
 * not cross threads) and then loads the TypeScript worker body.
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Embedder } from '../ports/embedder.ts';
import { UseLiteEmbedder } from './use-lite-embedder.ts';
import { assertEmbeddableTexts } from './embeddable-text.ts';

type Reply = { id: number; vectors?: Float32Array[]; error?: string };

export class WorkerPoolEmbedder implements Embedder {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  private nextId = 0;

  constructor(size = Math.max(1, availableParallelism())) {
    const reference = new UseLiteEmbedder();
    this.provider = reference.provider;
    this.model = reference.model;
    this.dimensions = reference.dimensions;
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(new URL('./use-lite-worker.mjs', import.meta.url));
      worker.on('message', (reply: Reply) => {
        const waiting = this.pending.get(reply.id);
        this.pending.delete(reply.id);
        if (reply.vectors) waiting?.resolve(reply.vectors);
        else waiting?.reject(new Error(`embedding worker failed (${reply.error})`));
      });
      worker.unref();
      return worker;
    });
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    assertEmbeddableTexts(texts);
    signal?.throwIfAborted();
    const share = Math.ceil(texts.length / this.workers.length);
    const parts = this.workers
      .map((worker, i) => ({ worker, texts: texts.slice(i * share, (i + 1) * share) }))
      .filter((p) => p.texts.length > 0)
      .map(
        ({ worker, texts: chunk }) =>
          new Promise<Float32Array[]>((resolve, reject) => {
            const id = this.nextId++;
            this.pending.set(id, { resolve, reject });
            worker.postMessage({ id, texts: chunk });
          }),
      );
    return (await Promise.all(parts)).flat();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
