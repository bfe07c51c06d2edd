/**
 * What `chatctx serve` starts before it loads the server (bin/chatctx.js): the store's
 * thread, so that PGlite's modules load while the main thread loads the server's, and
 * the bundled encoder's, so that its model loads then too. Each is a `SpareThread`:
 * opening the store takes the first, the encoder's pool the second, and the server
 * drops what it does not use (another embedding provider, a failed start).
 */
import { startEncoderThread } from '../embeddings/encoder-head-start.ts';
import { startStoreThread } from '../storage/pglite-thread-sql.ts';

export function startServeThreads(): void {
  // The store first: the server waits for the store before anything else.
  startStoreThread();
  startEncoderThread();
}
