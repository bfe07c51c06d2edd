/**
 * Starts a Node server listening and resolves once it is (or rejects with the bind
 * error, e.g. EADDRINUSE): the one way the local runtime and the test stand-ins bind.
 * Also the count of answers in flight and the drain that waits for them, shared by
 * the MCP port and the owner port.
 */
import type { Server } from 'node:net';
import type { RequestListener, Server as HttpServer, ServerResponse } from 'node:http';

export function listen(server: Pick<Server, 'once' | 'off' | 'listen'>, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** A listener that keeps count of the answers in flight (not held event streams), so shutdown can wait for them. */
export function tracked(listener: RequestListener) {
  const open = new Set<ServerResponse>();
  const wrapped: RequestListener = (req, res) => {
    if (req.method !== 'GET') {
      open.add(res);
      res.once('close', () => open.delete(res));
    }
    return listener(req, res);
  };
  return { listener: wrapped, open };
}

/** Stops accepting, waits for answers in flight (at most `deadlineMs`), then cuts what is left. */
export async function drain(server: HttpServer, open: ReadonlySet<ServerResponse>, deadlineMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = Date.now() + deadlineMs;
  while (open.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  server.closeAllConnections();
  await closed;
}
