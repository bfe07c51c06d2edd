/**
 * Worker thread body for `WorkerPoolEmbedder`: one USE-lite model per thread,
 * loaded as soon as the thread starts. Messages in: `{ id, texts }`; out:
 * `{ id, vectors }` or `{ id, error }` (the error's name only, never its text).
 */
import { parentPort } from 'node:worker_threads';
import { UseLiteEmbedder } from './use-lite-embedder.ts';

const embedder = new UseLiteEmbedder();
// A failed load is retried by the first real call.
embedder.embed(['load the model']).catch(() => undefined);

parentPort!.on('message', async ({ id, texts }: { id: number; texts: string[] }) => {
  try {
    const vectors = await embedder.embed(texts);
    parentPort!.postMessage({ id, vectors }, vectors.map((v) => v.buffer as ArrayBuffer));
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.name : 'Error' });
  }
});
