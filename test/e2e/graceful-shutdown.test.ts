/**
 * A server told to stop (SIGTERM) finishes the answer it is giving and takes no
 * new request.
 */
import { describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { preparedDataDir, startServer } from '../support/local-server.ts';
import { mcpPostHead, rawConnection } from '../support/raw-http.ts';

describe('shutdown', () => {
  it('lets a request in flight finish on SIGTERM, and accepts no new one', async () => {
    const dir = await preparedDataDir();
    const own = await startServer({ CHATCTX_EMBEDDINGS: 'none' }, dir);
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
      const connection = rawConnection(own.url);
      connection.write(`${mcpPostHead(own.url, body.length, ['Connection: close'])}${body.slice(0, 10)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopping = own.stop();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await expect(fetch(own.url, { method: 'POST', body })).rejects.toThrow();
      connection.write(body.slice(10));
      await connection.closed;
      await stopping;
      expect(connection.reply()).toMatch(/^HTTP\/1\.1 200/);
      expect(connection.reply()).toContain('"id":3');
    } finally {
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
