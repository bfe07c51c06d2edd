/**
 * draftFromUrl reads a page's title, publisher and candidate evidence passages, and
 * refuses what it must not read, here against a fake fetcher so each rule is checked
 * on its own. The real fetch, over a local https server and through the CLI, is in
 * `test/e2e/record-draft.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { draftFromUrl, slugFrom, type DraftLimits, type PageFetcher } from '../../lambdas/records/record-draft.ts';
import { UntrustedFetchError, type UntrustedFetchRequest } from '../../lambdas/streams/untrusted-fetch.ts';
import { recordFileSchema } from '../../lambdas/records/record-schema.ts';
import { ValidationError } from '../../lambdas/errors/app-error.ts';

const LIMITS: DraftLimits = { maxBytes: 100_000, timeoutMs: 5_000, excerptMaxWords: 20, license: 'CC-BY-4.0' };

const html = (body: string, head = '') => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

/**
 * A fetcher that answers each address from `pages` as the untrusted fetcher would
 * (one hop, the body read only when wanted and only up to the cap), and records
 * what was asked.
 */
function fakeFetch(pages: Record<string, () => Response>) {
  const asked: { url: string; request: UntrustedFetchRequest }[] = [];
  const impl: PageFetcher = {
    async get(url, request) {
      asked.push({ url, request });
      const page = pages[url];
      if (!page) throw new UntrustedFetchError('unresolvable', `${new URL(url).hostname} could not be resolved.`);
      const response = page();
      const headers = Object.fromEntries(response.headers);
      if (request.wantBody && !request.wantBody(response.status, headers)) return { url: new URL(url), status: response.status, headers, body: undefined };
      const body = Buffer.from(await response.arrayBuffer());
      if (body.byteLength > request.maxBytes) throw new UntrustedFetchError('too_large', 'too large');
      return { url: new URL(url), status: response.status, headers, body };
    },
  };
  return { impl, asked };
}

const htmlPage = (text: string, headers: Record<string, string> = {}) => () =>
  new Response(text, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } });

const SENTENCE = 'Every outbound call from a background job needs a deadline of its own.';

describe('draftFromUrl extraction', () => {
  it('prefers og:title and og:site_name, and takes passages from main only, in order, without page furniture', async () => {
    // Prepare
    const page = html(
      `<header><p>Header text that is long enough to count as a passage here.</p></header>
       <nav><ul><li>Navigation entry that is long enough to count as a passage too.</li></ul></nav>
       <p>Outside main: this paragraph is long enough but main is preferred.</p>
       <main><h1>Heading</h1>
         <p>${SENTENCE}</p>
         <script>document.write("<p>Script text that would be a passage if it were parsed.</p>")</script>
         <ul><li>A list item with enough words to become a candidate passage.</li><li>Too short.</li></ul>
         <p>${SENTENCE}</p>
         <blockquote><p>A quoted paragraph inside a blockquote, long enough to be kept.</p></blockquote>
       </main>
       <footer><p>Footer text that is long enough to count as a passage as well.</p></footer>`,
      `<title>Fallback title</title><meta property="og:title" content="  Deadlines &amp; timeouts  "><meta property="og:site_name" content="Example Docs">`,
    );
    const { impl } = fakeFetch({ 'https://docs.example/deadlines': htmlPage(page) });

    // Act
    const result = await draftFromUrl('https://docs.example/deadlines', LIMITS, impl);

    // Assess
    expect(result.final_url).toBe('https://docs.example/deadlines');
    expect(result.draft.title).toBe('Deadlines & timeouts');
    expect(result.draft.slug).toBe('deadlines-timeouts');
    expect(result.draft.sources).toEqual([
      {
        title: 'Deadlines & timeouts',
        url: 'https://docs.example/deadlines',
        publisher: 'Example Docs',
        evidence_excerpt: SENTENCE,
        relation: 'supports',
        // Read from the page just now: verified as of today, from the page itself.
        verified_at: new Date().toISOString().slice(0, 10),
        verified_from: { page: 'https://docs.example/deadlines' },
      },
    ]);
    expect(result.passages).toEqual([
      SENTENCE,
      'A list item with enough words to become a candidate passage.',
      'A quoted paragraph inside a blockquote, long enough to be kept.',
    ]);
    expect(result.draft._evidence_candidates).toEqual(result.passages);
    expect(result.draft).not.toHaveProperty('reviewed_at');
  });

  it('falls back to <title>, then <h1>, for the title and to application-name, then the host, for the publisher', async () => {
    // Prepare
    const { impl } = fakeFetch({
      'https://a.example/': htmlPage(html('<h1>Heading</h1>', '<title>\n  Page   title \n</title><meta name="application-name" content="App">')),
      'https://b.example/x': htmlPage(html('<h1> The   heading </h1>')),
    });

    // Act
    const a = await draftFromUrl('https://a.example/', LIMITS, impl);
    const b = await draftFromUrl('https://b.example/x', LIMITS, impl);

    // Assess
    expect([a.draft.title, a.draft.sources[0].publisher]).toEqual(['Page title', 'App']);
    expect([b.draft.title, b.draft.sources[0].publisher]).toEqual(['The heading', 'b.example']);
  });

  it('keeps passages within the word limits: short ones dropped, long ones cut to their first whole sentences', async () => {
    // Prepare
    const long = `${SENTENCE} A second sentence follows it here. ${'Word '.repeat(30)}ends.`;
    const page = html(`<article><p>Too short to cite.</p><p>${long}</p><p>${'x '.repeat(40)}</p></article>`);
    const { impl } = fakeFetch({ 'https://c.example/': htmlPage(page) });

    // Act
    const { passages } = await draftFromUrl('https://c.example/', LIMITS, impl);

    // Assess
    expect(passages).toEqual([`${SENTENCE} A second sentence follows it here.`]);
  });

  it('offers at most eight passages, without duplicates', async () => {
    // Prepare
    const paragraphs = Array.from({ length: 12 }, (_, i) => `<p>Paragraph number ${i} has exactly enough words to count.</p>`);
    const { impl } = fakeFetch({ 'https://d.example/': htmlPage(html(paragraphs[0]! + paragraphs.join(''))) });

    // Act
    const { passages } = await draftFromUrl('https://d.example/', LIMITS, impl);

    // Assess
    expect(passages).toHaveLength(8);
    expect(new Set(passages).size).toBe(8);
    expect(passages[0]).toBe('Paragraph number 0 has exactly enough words to count.');
  });

  it('writes a draft the importer refuses until the owner completes it, and accepts once completed', async () => {
    // Prepare
    const { impl } = fakeFetch({ 'https://e.example/': htmlPage(html(`<p>${SENTENCE}</p>`, '<title>Deadlines for jobs</title>')) });
    const { draft } = await draftFromUrl('https://e.example/', LIMITS, impl);

    // Act
    const asDrafted = recordFileSchema.safeParse(draft);
    const { _evidence_candidates: _c, _draft_note: _n, ...rest } = draft;
    const completed = recordFileSchema.safeParse({
      ...rest,
      summary: 'Jobs hang when a call never answers.',
      recommendation: 'Give every outbound call a deadline.',
      rationale: 'A hung call holds its worker forever.',
    });

    // Assess
    expect(asDrafted.success).toBe(false);
    expect(completed.success, JSON.stringify(completed.error?.issues)).toBe(true);
  });

  it('makes schema-valid slugs from any title', () => {
    const url = new URL('https://f.example/guides/retries');
    expect(slugFrom('Ça marche — déjà vu!', url)).toBe('ca-marche-deja-vu');
    expect(slugFrom('日本語', url)).toBe('f-example-guides-retries');
    const long = slugFrom('word '.repeat(60), url);
    expect(long.length).toBeLessThanOrEqual(120);
    expect(long).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  });
});

describe('draftFromUrl refusals', () => {
  const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

  it('refuses an address that is not https, before fetching anything', async () => {
    const { impl, asked } = fakeFetch({});
    const error = await refusal(draftFromUrl('http://g.example/', LIMITS, impl));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/only https pages can be drafted from/);
    expect(asked).toEqual([]);
  });

  it('follows https redirects manually, up to five, and refuses a sixth or one to http', async () => {
    // Prepare
    const redirect = (to: string) => () => new Response(null, { status: 302, headers: { location: to } });
    const chain: Record<string, () => Response> = { 'https://h.example/6': htmlPage(html('<h1>Arrived</h1>')) };
    for (let i = 0; i < 6; i++) chain[`https://h.example/${i}`] = redirect(`/${i + 1}`);
    chain['https://h.example/to-http'] = redirect('http://h.example/plain');
    const { impl, asked } = fakeFetch(chain);

    // Act
    const five = await draftFromUrl('https://h.example/1', LIMITS, impl);
    const six = await refusal(draftFromUrl('https://h.example/0', LIMITS, impl));
    const toHttp = await refusal(draftFromUrl('https://h.example/to-http', LIMITS, impl));

    // Assess
    expect(five.final_url).toBe('https://h.example/6');
    expect(five.draft.sources[0].url).toBe('https://h.example/6');
    // Each hop is its own request, within what is left of the one deadline.
    expect(asked.slice(0, 6).map((a) => a.url)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `https://h.example/${i}`));
    expect(asked.every((a) => a.request.deadlineMs <= LIMITS.timeoutMs)).toBe(true);
    expect((six as Error).message).toMatch(/redirects more than 5 times/);
    expect((toHttp as Error).message).toMatch(/redirects to http:\/\/h\.example\/plain, which is not https/);
  });

  it('refuses a non-2xx answer, a page that is not HTML, and a page over the size limit', async () => {
    // Prepare
    const { impl } = fakeFetch({
      'https://i.example/missing': () => new Response('gone', { status: 404, headers: { 'content-type': 'text/html' } }),
      'https://i.example/data.json': () => new Response('{}', { headers: { 'content-type': 'application/json' } }),
      'https://i.example/big': htmlPage(html('<p>x</p>'), { 'content-length': '200000' }),
      'https://i.example/big-unannounced': htmlPage(html(`<p>${'x'.repeat(150_000)}</p>`)),
    });

    // Act
    const messages = await Promise.all(
      ['missing', 'data.json', 'big', 'big-unannounced'].map(async (path) => ((await refusal(draftFromUrl(`https://i.example/${path}`, LIMITS, impl))) as Error).message),
    );

    // Assess
    expect(messages[0]).toMatch(/answered HTTP 404/);
    expect(messages[1]).toMatch(/of type application\/json, not an HTML page/);
    expect(messages[2]).toMatch(/larger than 100000 bytes/);
    expect(messages[3]).toMatch(/larger than 100000 bytes/);
  });

  it('says so when the page cannot be reached', async () => {
    const { impl } = fakeFetch({});
    const error = await refusal(draftFromUrl('https://nowhere.example/', LIMITS, impl));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe('Could not fetch https://nowhere.example/: nowhere.example does not resolve.');
  });
});
