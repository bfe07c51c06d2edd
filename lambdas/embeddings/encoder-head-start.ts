/**
 * A head start for the bundled encoder's first thread. Loading the model takes its
 * thread about a second of CPU; started by the pool, it would begin only once the
 * command line and the server's modules have loaded (about half a second on the main
 * thread, while a second core sits idle). `chatctx serve` calls `startEncoderThread`
 * before loading them, and the first `WorkerPoolEmbedder` to need a thread takes this
 * one (`takeEncoderThread`) with its model loaded or loading.
 *
 * A thread nobody takes (the server was configured for another provider, or failed
 * to start) is stopped by `dropEncoderThread`, and never keeps the process alive: it
 * is unreferenced like an idle pool thread. One that failed before it was taken is
 * not handed out; the pool starts a fresh one instead.
 */
import { Worker } from 'node:worker_threads';

export const ENCODER_WORKER_URL = new URL('./use-lite-worker.mjs', import.meta.url);

let spare: { worker: Worker; failed: boolean } | undefined;

/** Starts the encoder's thread now, unless one is already waiting. */
export function startEncoderThread(): void {
  if (spare) return;
  const started = { worker: new Worker(ENCODER_WORKER_URL), failed: false };
  const failed = () => (started.failed = true);
  started.worker.on('error', failed).on('exit', failed).unref();
  spare = started;
}

/** The waiting thread, if there is one still running; the caller attaches its own listeners. */
export function takeEncoderThread(): Worker | undefined {
  const taken = spare;
  spare = undefined;
  if (!taken || taken.failed) return undefined;
  taken.worker.removeAllListeners('error').removeAllListeners('exit');
  return taken.worker;
}

/** Stops a thread that nobody took. */
export async function dropEncoderThread(): Promise<void> {
  await takeEncoderThread()?.terminate();
}
