/**
 * A head start for the bundled encoder's first thread (`SpareThread`). Loading the
 * model takes its thread about a second of CPU; `chatctx serve` starts it before it
 * loads the server, and the first `WorkerPoolEmbedder` to need a thread takes this one.
 * A server configured for another provider drops it.
 */
import { SpareThread } from '../threads/spare-thread.ts';

export const ENCODER_WORKER_URL = new URL('./use-lite-worker.mjs', import.meta.url);

const encoderThread = new SpareThread(ENCODER_WORKER_URL);

/** Starts the encoder's thread now, unless one is already waiting. */
export const startEncoderThread = (): void => encoderThread.start();
/** The waiting thread, if there is one still running. */
export const takeEncoderThread = () => encoderThread.take();
/** Stops a thread that nobody took. */
export const dropEncoderThread = (): Promise<void> => encoderThread.drop();
