/**
 * A worker thread started ahead of the code that will use it. `chatctx serve` starts
 * the store's thread and the encoder's before it loads the rest of the server (about
 * half a second on the main thread, while a second core would sit idle), and the code
 * that needs the thread later takes it with its modules (and, for the encoder, its
 * model) loaded or loading.
 *
 * A thread is only handed out while it runs: one that failed or exited before it was
 * taken is left, and the caller starts a fresh one. A thread nobody takes never keeps
 * the process alive (it is unreferenced) and `drop` stops it.
 */
import { Worker } from 'node:worker_threads';

export class SpareThread {
  private spare: { worker: Worker; failed: boolean } | undefined;

  constructor(private readonly entry: URL) {}

  /** Starts the thread now, unless one is already waiting. */
  start(): void {
    if (this.spare) return;
    const started = { worker: new Worker(this.entry), failed: false };
    const failed = () => (started.failed = true);
    started.worker.on('error', failed).on('exit', failed).unref();
    this.spare = started;
  }

  /** Whether a thread is waiting and still running (what `take` would hand out). */
  get waiting(): boolean {
    return this.spare !== undefined && !this.spare.failed;
  }

  /** The waiting thread, if one is still running; the caller attaches its own listeners (and refs it if it must keep the process alive). */
  take(): Worker | undefined {
    const taken = this.spare;
    this.spare = undefined;
    if (!taken || taken.failed) return undefined;
    taken.worker.removeAllListeners('error').removeAllListeners('exit');
    return taken.worker;
  }

  /** Stops a thread that nobody took. */
  async drop(): Promise<void> {
    await this.take()?.terminate();
  }
}
