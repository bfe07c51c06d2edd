/**
 * The GET event stream (`lambdas/protocol/event-stream.ts`): in `close` mode one
 * comment and a retry hint, then the end, never counted; in `hold` mode a comment,
 * then a keep-alive every interval (a fake clock drives it) until the client goes
 * away, with the held streams capped overall and per client address, and each
 * place given back once however the stream ends.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StreamCount, openEventStream, type EventStreamMode } from '../../lambdas/protocol/event-stream.ts';

const get = (signal?: AbortSignal) => new Request('http://127.0.0.1:8787/mcp', { headers: { Accept: 'text/event-stream' }, signal });
const decode = (chunk: Uint8Array | undefined) => new TextDecoder().decode(chunk);

describe('close mode', () => {
  it('sends ": connected" and the retry hint, then ends, as an event stream', async () => {
    const response = openEventStream(get(), { mode: 'close', retryMs: 3_600_000 }, new StreamCount(), '203.0.113.1')!;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(await response.text()).toBe(': connected\nretry: 3600000\n\n');
  });

  it('is never refused: a closing stream holds no place', () => {
    const count = new StreamCount();
    const close: EventStreamMode = { mode: 'close', retryMs: 1000 };
    for (let i = 0; i < 300; i++) expect(openEventStream(get(), close, count, '203.0.113.1')).toBeDefined();
    expect(count.take('203.0.113.1', 1, 1)).toBeDefined();
  });
});

describe('hold mode', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const hold: EventStreamMode = { mode: 'hold', keepAliveMs: 15_000 };

  it('sends ": connected", then a keep-alive comment every interval until the client goes away', async () => {
    const gone = new AbortController();
    const reader = openEventStream(get(gone.signal), hold, new StreamCount(), '203.0.113.1')!.body!.getReader();
    expect(decode((await reader.read()).value)).toBe(': connected\n\n');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(decode((await reader.read()).value)).toBe(': keepalive\n\n');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(decode((await reader.read()).value)).toBe(': keepalive\n\n');

    gone.abort();
    expect((await reader.read()).done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops its keep-alives when the reader cancels', async () => {
    const response = openEventStream(get(), hold, new StreamCount(), '203.0.113.1')!;
    expect(vi.getTimerCount()).toBe(1);
    await response.body!.cancel();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds no place and no timer for a client that left before its stream opened', async () => {
    const count = new StreamCount();
    const gone = new AbortController();
    gone.abort();
    const response = openEventStream(get(gone.signal), { ...hold, maxStreams: 1 }, count, 'a')!;
    expect(vi.getTimerCount()).toBe(0);
    expect(count.take('b', 1, 1)).toBeDefined();
    expect(await response.text()).toBe(': connected\n\n');
  });

  it('holds at most maxStreamsPerClient for one address and maxStreams in all', () => {
    const count = new StreamCount();
    const capped: EventStreamMode = { ...hold, maxStreams: 3, maxStreamsPerClient: 2 };
    const open = (client: string) => openEventStream(get(), capped, count, client);
    expect(open('a')).toBeDefined();
    expect(open('a')).toBeDefined();
    expect(open('a')).toBeUndefined();
    expect(open('b')).toBeDefined();
    expect(open('c')).toBeUndefined();
  });

  it('holds 256 streams in all and 8 per address unless told otherwise', () => {
    const count = new StreamCount();
    for (let i = 0; i < 8; i++) expect(openEventStream(get(), hold, count, 'one')).toBeDefined();
    expect(openEventStream(get(), hold, count, 'one')).toBeUndefined();
    for (let i = 8; i < 256; i++) expect(openEventStream(get(), hold, count, `client-${i % 40}`)).toBeDefined();
    expect(openEventStream(get(), hold, count, 'fresh')).toBeUndefined();
  });

  it('gives a place back once when a stream ends, however many ways it ends', async () => {
    const count = new StreamCount();
    const capped: EventStreamMode = { ...hold, maxStreams: 2 };
    const gone = new AbortController();
    const first = openEventStream(get(gone.signal), capped, count, 'a')!;
    expect(openEventStream(get(), capped, count, 'b')).toBeDefined();
    expect(openEventStream(get(), capped, count, 'c')).toBeUndefined();

    // The reader cancels, then the request is aborted too: both end the same stream.
    await first.body!.cancel();
    gone.abort();
    expect(openEventStream(get(), capped, count, 'c')).toBeDefined();
    expect(openEventStream(get(), capped, count, 'd')).toBeUndefined();
  });
});

describe('StreamCount', () => {
  it('counts per client and in all, and a release given twice frees one place', () => {
    const count = new StreamCount();
    const release = count.take('a', 2, 1)!;
    expect(count.take('a', 2, 1)).toBeUndefined();
    expect(count.take('b', 2, 1)).toBeDefined();
    release();
    release();
    expect(count.take('a', 2, 1)).toBeDefined();
    expect(count.take('c', 2, 1)).toBeUndefined();
  });
});
