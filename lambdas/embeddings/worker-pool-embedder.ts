/**
 * USE-lite on worker threads: the encoder is synchronous JavaScript, so on the
 * server's event loop every embedding (an import's records, a query on a cache
 * miss) would stop every other request. Here each worker holds its own model and
 * the calling thread only waits. Same model and outputs as `UseLiteEmbedder`.
 *
 * - Workers start on the first `embed` call, not at construction, so a command that
 *   never embeds never pays for the model; each loads it as soon as it starts.
 * - Texts go out in chunks of at most 32, one chunk per worker at a time, from one
 *   queue in which short calls (a query, a few passages) go before bulk chunks: a
 *   search embedding its query waits for at most one chunk of an import, and a bulk
 *   embedding keeps every worker busy. Short calls that queue up while the workers
 *   are busy go together, a few at a time (SHORT_BATCH): the encoder embeds a batch
 *   of several texts in about 30% less time per text than one at a time (measured),
 *   which is what lets concurrent searches with new questions keep up.
 * - A worker that crashes or exits fails only the chunks it held; the next chunk
 *   gets a fresh worker. A caller's signal rejects its call at once and takes its
 *   chunks that no worker has started off the queue (a chunk already in a worker
 *   runs to completion there and is discarded). Left queued, they were embedded
 *   anyway: under more new questions than the encoder keeps up with, every search
 *   that passed its deadline left its query behind, and the encoder went on with
 *   that backlog for seconds after the load stopped, ahead of fresh questions.
 *
 * Each worker starts from a small .mjs entry that registers tsx (loader hooks do
 * not cross threads) and then loads the TypeScript worker body.
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { Embedder } from '../ports/embedder.ts';
import { USE_LITE_BATCH_SIZE, USE_LITE_DIMENSIONS, UseLiteEmbedder } from './use-lite-embedder.ts';
import { assertEmbeddableTexts } from './embeddable-text.ts';
import { positiveInteger } from '../errors/argument-checks.ts';
import { ENCODER_WORKER_URL, takeEncoderThread } from './encoder-head-start.ts';

type Reply = { id: number; vectors?: Float32Array[]; error?: string };

interface Job {
  readonly texts: string[];
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  /** The chunk the worker is embedding, if any: one bulk job, or several short ones. */
  busy?: { readonly id: number; readonly jobs: readonly Job[] };
}

/** Calls with at most this many texts go before bulk work. */
const SHORT_CALL = 4;
/**
 * Most texts of short calls sent together. Small on purpose: while the worker embeds
 * the next few queries, the searches of the last few run on the other threads; one
 * big batch leaves those idle while it runs, then the worker idle while they do.
 * Measured with 16 clients asking new questions: about 50 searches/s with batches of
 * at most 8, 49 with 4, 43 with 2, 42 with 32.
 */
const SHORT_BATCH = 8;

/** Threads for embedding beside the event loop's: all cores but one, at least one. */
export function defaultEmbeddingThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

export class WorkerPoolEmbedder implements Embedder {
  readonly provider: string;
  readonly model: string;
  readonly dimensions = USE_LITE_DIMENSIONS;
  private readonly slots: (Slot | undefined)[];
  private readonly urgent: Job[] = [];
  private readonly bulk: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(threads = defaultEmbeddingThreads()) {
    const reference = new UseLiteEmbedder();
    this.provider = reference.provider;
    this.model = reference.model;
    this.slots = Array.from({ length: positiveInteger('threads', threads) }, () => undefined);
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    assertEmbeddableTexts(texts);
    signal?.throwIfAborted();
    if (this.closed) throw new Error('The embedding worker pool is closed.');
    const queue = texts.length <= SHORT_CALL ? this.urgent : this.bulk;
    // Chunks of similar length: the model pads a batch to its longest text (use-lite-embedder.ts).
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const chunks: Promise<Float32Array[]>[] = [];
    const queued: Job[] = [];
    for (let start = 0; start < order.length; start += USE_LITE_BATCH_SIZE) {
      const chunk = order.slice(start, start + USE_LITE_BATCH_SIZE).map((i) => texts[i]!);
      chunks.push(
        new Promise((resolve, reject) => {
          const job = { texts: chunk, resolve, reject };
          queued.push(job);
          queue.push(job);
        }),
      );
    }
    this.pump();
    const all = Promise.all(chunks).then((parts) => {
      const sorted = parts.flat();
      const vectors: Float32Array[] = new Array(texts.length);
      order.forEach((original, position) => (vectors[original] = sorted[position]!));
      return vectors;
    });
    if (!signal) return all;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.withdraw(queue, queued);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      all.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Texts waiting for a worker (not those a worker is embedding). */
  get queuedTexts(): number {
    return [...this.urgent, ...this.bulk].reduce((sum, job) => sum + job.texts.length, 0);
  }

  /** Takes `jobs` that no worker has started off `queue`. */
  private withdraw(queue: Job[], jobs: readonly Job[]): void {
    const gone = new Set(jobs);
    const kept = queue.filter((job) => !gone.has(job));
    queue.splice(0, queue.length, ...kept);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of [...this.urgent.splice(0), ...this.bulk.splice(0)]) job.reject(new Error('The embedding worker pool is closed.'));
    await Promise.all(this.slots.map((slot) => slot?.worker.terminate()));
  }

  /** Gives every idle worker (starting workers as needed) the next job, short calls first. */
  private pump(): void {
    for (let i = 0; i < this.slots.length; i++) {
      if (this.urgent.length === 0 && this.bulk.length === 0) return;
      const slot = (this.slots[i] ??= this.spawn(i));
      if (slot.busy) continue;
      const jobs = this.urgent.length > 0 ? this.shortCalls() : [this.bulk.shift()!];
      slot.busy = { id: this.nextId++, jobs };
      // A worker with work keeps the process alive; an idle one must not (see spawn).
      slot.worker.ref();
      slot.worker.postMessage({ id: slot.busy.id, texts: jobs.flatMap((job) => job.texts) });
    }
  }

  /** As many queued short calls as fit SHORT_BATCH texts, in order. */
  private shortCalls(): Job[] {
    const jobs = [this.urgent.shift()!];
    let texts = jobs[0]!.texts.length;
    while (this.urgent.length > 0 && texts + this.urgent[0]!.texts.length <= SHORT_BATCH) {
      const job = this.urgent.shift()!;
      texts += job.texts.length;
      jobs.push(job);
    }
    return jobs;
  }

  private spawn(index: number): Slot {
    // The first thread may have been started ahead, with its model loading already (encoder-head-start.ts).
    const worker = takeEncoderThread() ?? new Worker(ENCODER_WORKER_URL);
    const slot: Slot = { worker };
    const fail = (error: Error) => {
      if (this.slots[index] === slot) this.slots[index] = undefined;
      for (const job of slot.busy?.jobs ?? []) job.reject(error);
      slot.busy = undefined;
      if (!this.closed) this.pump();
    };
    worker.on('message', (reply: Reply) => {
      const busy = slot.busy;
      if (!busy || busy.id !== reply.id) return;
      slot.busy = undefined;
      worker.unref();
      let next = 0;
      for (const job of busy.jobs) {
        if (reply.vectors) job.resolve(reply.vectors.slice(next, (next += job.texts.length)));
        else job.reject(new Error(`embedding worker failed (${reply.error})`));
      }
      this.pump();
    });
    worker.on('error', (error) => fail(new Error(`embedding worker crashed (${error.name})`)));
    worker.on('exit', (code) => fail(new Error(`embedding worker exited (code ${code})`)));
    // Idle workers must not keep a CLI command's process alive.
    worker.unref();
    return slot;
  }
}
