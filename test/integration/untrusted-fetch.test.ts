/**
 * The fetcher for URLs someone else chose, over real TLS to a local server that
 * a made-up name resolves to through an injected resolver. Under the default
 * address policy that name is refused before any connection (the SSRF a hosts
 * file entry opened); with the local address allowed, the connection goes to the
 * checked address and the name is what the certificate and Host header carry.
 * A body trickled a byte at a time is cut off by the deadline even while garbage
 * collection runs continuously, and a body past the cap is cut off too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { UntrustedFetchError, UntrustedFetcher, isPublicAddress } from '../../lambdas/streams/untrusted-fetch.ts';
import { startTlsServer, type TlsServer } from '../support/tls-server.ts';

const NAME = 'metadata.example.test';
let tls: TlsServer;
const seen: { host: string | undefined; path: string | undefined }[] = [];
/** Bytes the trickling route sent before its socket went away, and whether it went away. */
const trickle = { sent: 0, closed: false };
const TRICKLE_BYTES = 200;

beforeAll(async () => {
  tls = await startTlsServer([NAME], (req, res) => {
    seen.push({ host: req.headers.host, path: req.url });
    if (req.url === '/doc.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else if (req.url === '/trickle') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => {
        if (trickle.sent === TRICKLE_BYTES) return res.end();
        res.write(' ');
        trickle.sent++;
      }, 100);
      res.on('close', () => {
        clearInterval(timer);
        trickle.closed = true;
      });
    } else if (req.url === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10; i++) res.write('x'.repeat(1000));
      res.end();
    } else if (req.url === '/big-announced') {
      const body = 'y'.repeat(20_000);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    } else if (req.url === '/moved') {
      res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
    } else {
      res.writeHead(404).end();
    }
  });
}, 240_000);

afterAll(async () => {
  await tls?.close();
});

const toLocal = async (host: string) => (host === NAME ? ['127.0.0.1'] : Promise.reject(new Error('ENOTFOUND')));
const url = (path: string) => `https://${NAME}:${tls.port}${path}`;
const LIMITS = { deadlineMs: 10_000, maxBytes: 4096 };

async function failure(promise: Promise<unknown>): Promise<UntrustedFetchError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(UntrustedFetchError);
  return error as UntrustedFetchError;
}

describe('which addresses are public', () => {
  const refused = [
    '127.0.0.1', '127.8.9.10', '0.0.0.0', '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '224.0.0.1', '239.255.255.250', '255.255.255.255', '192.0.2.7', '198.18.0.1', '240.0.0.1',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::1', '2001:db8::1', 'fec0::1',
    'not-an-address', '',
  ];
  const allowed = ['93.184.215.14', '1.1.1.1', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e'];

  it.each(refused)('refuses %s', (address) => expect(isPublicAddress(address)).toBe(false));
  it.each(allowed)('allows %s', (address) => expect(isPublicAddress(address)).toBe(true));
});

describe('the untrusted fetcher', () => {
  it('refuses a name that resolves to loopback before connecting (the default policy)', async () => {
    const before = seen.length;
    const fetcher = new UntrustedFetcher({ resolve: toLocal, ca: tls.cert });
    expect((await failure(fetcher.get(url('/doc.json'), LIMITS))).kind).toBe('forbidden_address');
    expect(seen.length).toBe(before);
  });

  it('refuses a name when any of its addresses is not public, and address literals of every special kind', async () => {
    const mixed = new UntrustedFetcher({ resolve: async () => ['93.184.215.14', '10.0.0.5'] });
    expect((await failure(mixed.get('https://mixed.example/x', LIMITS))).kind).toBe('forbidden_address');
    const fetcher = new UntrustedFetcher();
    for (const literal of ['https://127.0.0.1/', 'https://[::1]/', 'https://[::ffff:127.0.0.1]/', 'https://169.254.169.254/latest/meta-data/', 'https://2130706433/', 'https://0x7f.1/']) {
      expect((await failure(fetcher.get(literal, LIMITS))).kind, literal).toBe('forbidden_address');
    }
  });

  it('refuses what is not https, and URLs with credentials', async () => {
    const fetcher = new UntrustedFetcher({ resolve: toLocal });
    for (const bad of ['http://metadata.example.test/doc.json', 'file:///etc/passwd', 'ftp://x.example/', 'https://user:pw@metadata.example.test/', 'not a url']) {
      expect((await failure(fetcher.get(bad, LIMITS))).kind, bad).toBe('not_https');
    }
  });

  it('says when a name does not resolve', async () => {
    const fetcher = new UntrustedFetcher({ resolve: toLocal });
    expect((await failure(fetcher.get('https://nowhere.example/x', LIMITS))).kind).toBe('unresolvable');
  });

  it('connects to the checked address, resolving once, with the name as Host and checked against the certificate', async () => {
    let lookups = 0;
    const fetcher = new UntrustedFetcher({ resolve: async (host) => (lookups++, toLocal(host)), allowAddress: (a) => a === '127.0.0.1', ca: tls.cert });
    const answer = await fetcher.get(url('/doc.json'), LIMITS);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body!.toString('utf8'))).toEqual({ ok: true });
    expect(lookups).toBe(1);
    expect(seen.at(-1)).toEqual({ host: `${NAME}:${tls.port}`, path: '/doc.json' });
    // A name the certificate does not carry fails TLS, though it resolves to the same server.
    const other = new UntrustedFetcher({ resolve: async () => ['127.0.0.1'], allowAddress: () => true, ca: tls.cert });
    expect((await failure(other.get(`https://uncertified.example:${tls.port}/doc.json`, LIMITS))).kind).toBe('network');
  });

  it('does not follow a redirect: the caller gets it and checks the next hop itself', async () => {
    const fetcher = new UntrustedFetcher({ resolve: toLocal, allowAddress: () => true, ca: tls.cert });
    const answer = await fetcher.get(url('/moved'), LIMITS);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('https://169.254.169.254/latest/meta-data/');
    expect((await failure(new UntrustedFetcher().get(answer.headers.location!, LIMITS))).kind).toBe('forbidden_address');
  });

  it('cuts a body off past the cap, announced or not', async () => {
    const fetcher = new UntrustedFetcher({ resolve: toLocal, allowAddress: () => true, ca: tls.cert });
    expect((await failure(fetcher.get(url('/big-chunked'), LIMITS))).kind).toBe('too_large');
    expect((await failure(fetcher.get(url('/big-announced'), LIMITS))).kind).toBe('too_large');
  });

  it('ends a trickled body at the deadline while garbage collection runs all the time', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const churn = setInterval(() => {
      // Garbage, then a full collection: what undici's weakly held abort signal did not survive.
      Array.from({ length: 20_000 }, (_, i) => ({ i, s: String(i) }));
      gc();
    }, 20);
    try {
      const fetcher = new UntrustedFetcher({ resolve: toLocal, allowAddress: () => true, ca: tls.cert });
      const error = await failure(fetcher.get(url('/trickle'), { deadlineMs: 1500, maxBytes: 4096 }));
      expect(error.kind).toBe('deadline');
      // The server's socket went away long before it could send the whole trickle (20 s of it).
      await expect.poll(() => trickle.closed, { timeout: 60_000 }).toBe(true);
      expect(trickle.sent).toBeLessThan(TRICKLE_BYTES / 2);
    } finally {
      clearInterval(churn);
    }
  }, 240_000);
});
