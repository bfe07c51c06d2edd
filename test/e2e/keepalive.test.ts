/**
 * The GET stream stays open and sends `: keepalive` comments at the configured
 * interval (25 s by default; 1 s here so the test is quick).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPreparedServer, type TestServer } from '../support/local-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_KEEPALIVE_SECONDS: '1' });
});

afterAll(async () => {
  await server?.stop();
});

it('sends ": connected" and then keep-alive comments on an open GET stream', async () => {
  const controller = new AbortController();
  const res = await fetch(server.url, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(': keepalive')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  controller.abort();
  expect(text.startsWith(': connected\n\n')).toBe(true);
  expect(text).toContain(': keepalive\n\n');
});
