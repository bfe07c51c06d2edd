/**
 * Starts a Node server listening and resolves once it is (or rejects with the bind
 * error, e.g. EADDRINUSE): the one way the local runtime and the test stand-ins bind.
 */
import type { Server } from 'node:net';

export function listen(server: Pick<Server, 'once' | 'off' | 'listen'>, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
