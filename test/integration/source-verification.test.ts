/**
 * Evidence checked against its pages, over real TLS: a local HTTPS server (a
 * fresh self-signed certificate) serves the pages, made-up names resolve to it
 * through an injected resolver. Each status of a check, the excerpt fragments
 * joined by "…", Markdown and plain text as well as HTML, a same-host redirect
 * followed and another host's reported as moved, and a name resolving to loopback
 * refused before any connection under the default policy. Then through the store
 * (PGlite): `records.verify` stores what it found, `records.show` shows it, and
 * the evidence gate reads it at `records.import --approve` and `records.approve`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UntrustedFetcher } from '../../lambdas/streams/untrusted-fetch.ts';
import { checkSource } from '../../lambdas/records/source-check.ts';
import { runAdminCommand, type AdminDeps, type VerifyResult } from '../../lambdas/admin/admin-operations.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { applyRoles } from '../../lambdas/storage/database-roles.ts';
import { sourcesToVerify, verifySources } from '../../lambdas/records/source-verification.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { SearchCache } from '../../lambdas/retrieval/search-cache.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';
import { reviewedRecord } from '../support/records.ts';
import { startTlsServer, type TlsServer } from '../support/tls-server.ts';

const DOCS = 'docs.example.test';
const OTHER = 'elsewhere.example.test';
const PRIVATE = 'intranet.example.test';
const SENTENCE = 'Give every outbound call a deadline, and treat reaching it as an ordinary failure.';
const requests: string[] = [];
let tls: TlsServer;
let store: MemoryStore;

const page = (body: string) => `<!doctype html><html><head><title>t</title><script>var x = "${SENTENCE}";</script></head><body><nav>menu</nav><main>${body}</main></body></html>`;

beforeAll(async () => {
  tls = await startTlsServer([DOCS, OTHER, PRIVATE], (req, res) => {
    requests.push(`${(req.headers.host ?? '').split(':')[0]}${req.url}`);
    const html = { 'content-type': 'text/html; charset=utf-8' };
    switch (req.url) {
      case '/guide':
        return void res.writeHead(200, html).end(page(`<h1>Deadlines</h1><p>Give every outbound call a <em>deadline</em>,\n and treat reaching it as an ordinary   failure.</p><p>Deadlines compose across calls.</p><p>Call it a "deadline" - not a time&shy;out - and keep it short.</p>`));
      case '/rewritten':
        return void res.writeHead(200, html).end(page('<p>Every outbound call needs a deadline; reaching it is an ordinary failure to retry or report.</p><p>Unrelated text about caching headers.</p>'));
      case '/notes.md':
        return void res.writeHead(200, { 'content-type': 'text/markdown' }).end('# Notes\n\nGive every **outbound** call a deadline, and treat reaching it as an ordinary failure.\n');
      case '/plain.txt':
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`Preamble.\n${SENTENCE}\nEnd.`);
      case '/hop':
        return void res.writeHead(301, { location: '/guide' }).end();
      case '/away':
        return void res.writeHead(301, { location: `https://${OTHER}:${tls.port}/guide` }).end();
      case '/report.pdf':
        return void res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7');
      case '/huge':
        return void res.writeHead(200, html).end(page(`<p>${'word '.repeat(40_000)}</p>`));
      case '/slow':
        return void setTimeout(() => res.writeHead(200, html).end(page(SENTENCE)), 30_000).unref();
      default:
        return void res.writeHead(404, html).end('gone');
    }
  });
  store = await memoryStore({ starterCorpus: false });
}, 240_000);

afterAll(async () => {
  await tls?.close();
  await store?.sql.close?.();
});

const resolve = async (host: string) => ([DOCS, OTHER, PRIVATE].includes(host) ? ['127.0.0.1'] : Promise.reject(new Error('ENOTFOUND')));
const at = (path: string, host = DOCS) => `https://${host}:${tls.port}${path}`;
// Generous for a loaded machine; the slow page is checked with its own short deadline.
const LIMITS = { deadlineMs: 15_000, maxBytes: 64 * 1024 };
const check = (path: string, excerpt = SENTENCE, using = new UntrustedFetcher({ resolve, allowAddress: () => true, ca: tls.cert })) => checkSource(using, { url: at(path), excerpt }, LIMITS);

describe('checking one source', () => {
  it('verifies an excerpt quoted across markup, line breaks and spacing, in HTML, Markdown and plain text', async () => {
    for (const path of ['/guide', '/notes.md', '/plain.txt']) expect((await check(path)).status, path).toBe('verified');
    // Curly quotes, another dash and a soft hyphen on the page are forgiven; other words are not.
    expect((await check('/guide', 'Call it a \u201cdeadline\u201d \u2014 not a timeout \u2013 and keep it short.')).status).toBe('verified');
    expect((await check('/guide', 'Call it a \u201cdeadline\u201d \u2014 not a timeout \u2013 and keep it long.')).status).toBe('drifted');
  });

  it('checks each fragment of an excerpt joined by "…", in order', async () => {
    expect((await check('/guide', 'Give every outbound call a deadline … Deadlines compose across calls.')).status).toBe('verified');
    expect((await check('/guide', 'Deadlines compose across calls. … Give every outbound call a deadline')).status).toBe('drifted');
    expect((await check('/guide', 'Give every outbound call a deadline ... deadlines never compose')).status).toBe('drifted');
  });

  it('reports a rewritten page as drifted, with the closest passage and how alike it is', async () => {
    const drifted = await check('/rewritten');
    expect(drifted.status).toBe('drifted');
    expect(drifted.closest).toContain('every outbound call needs a deadline');
    expect(drifted.similarity).toBeGreaterThan(0.5);
    expect(drifted.similarity).toBeLessThan(1);
    expect(drifted.textHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('follows a redirect on the same host, and reports one to another host as moved', async () => {
    expect((await check('/hop')).status).toBe('verified');
    expect(await check('/away')).toMatchObject({ status: 'moved', detail: at('/guide', OTHER) });
  });

  it('reports a missing page, a slow one, a huge one and one that is not text', async () => {
    expect(await check('/missing')).toMatchObject({ status: 'unreachable', detail: 'HTTP 404' });
    const slow = await checkSource(new UntrustedFetcher({ resolve, allowAddress: () => true, ca: tls.cert }), { url: at('/slow'), excerpt: SENTENCE }, { ...LIMITS, deadlineMs: 1500 });
    expect(slow).toMatchObject({ status: 'unreachable', detail: 'timed out' });
    expect((await check('/huge')).status).toBe('too_large');
    expect(await check('/report.pdf')).toMatchObject({ status: 'not_text', detail: 'application/pdf' });
  });

  it('refuses a host resolving to a loopback or private address before connecting, by default', async () => {
    const before = requests.length;
    const result = await check('/guide', SENTENCE, new UntrustedFetcher({ resolve, ca: tls.cert }));
    expect(result).toMatchObject({ status: 'unreachable', detail: expect.stringMatching(/not public/) });
    expect(requests.length).toBe(before);
  });
});

describe('verification through the store and the gates', () => {
  const deps = (): AdminDeps => ({ sql: store.sql, secrets: { pepper: async () => store.pepper }, fetcher: new UntrustedFetcher({ resolve, allowAddress: () => true, ca: tls.cert }) });
  const recordAt = (slug: string, path: string) =>
    reviewedRecord(slug, { sources: [{ title: 'Deadlines', url: at(path), publisher: 'Example Docs', evidence_excerpt: SENTENCE, relation: 'supports' }] });

  it('stores each check, shows it with the record, and counts statuses', async () => {
    // The fixture's host stands for official documentation here.
    await runAdminCommand(deps(), { op: 'policy.change', kind: 'authoritative', value: DOCS, note: 'the test fixture' });
    await runAdminCommand(deps(), { op: 'records.import', records: [recordAt('deadline-guide', '/guide'), recordAt('deadline-rewritten', '/rewritten')], approve: false });
    const result = (await runAdminCommand(deps(), { op: 'records.verify', ids: [] })) as VerifyResult;
    expect(result.checked).toBe(2);
    expect(result.counts).toEqual({ verified: 1, drifted: 1 });
    expect(result.sources.find((s) => s.status === 'drifted')).toMatchObject({ slugs: ['deadline-rewritten'], closest: expect.stringContaining('needs a deadline') });
    const shown = (await runAdminCommand(deps(), { op: 'records.show', id: 'deadline-rewritten' })) as { source_checks: ({ status: string; closest: string } | null)[] };
    expect(shown.source_checks).toEqual([expect.objectContaining({ status: 'drifted', how: 'fetched' })]);
  });

  it('fails the evidence gate at approval for an excerpt found missing, and passes the verified one', async () => {
    const refused = runAdminCommand(deps(), { op: 'records.approve', ids: ['deadline-rewritten'], reviewer: 'owner', overrides: [] });
    await expect(refused).rejects.toMatchObject({ details: { problems: [expect.objectContaining({ where: 'deadline-rewritten', problem: expect.stringMatching(/^evidence: .*not on the page when checked/) })] } });
    await expect(runAdminCommand(deps(), { op: 'records.approve', ids: ['deadline-guide'], reviewer: 'owner', overrides: [] })).resolves.toMatchObject({ changed: 1 });
    // An override with a reason publishes it anyway, as with any gate.
    const overridden = await runAdminCommand(deps(), { op: 'records.approve', ids: ['deadline-rewritten'], reviewer: 'owner', overrides: [{ gate: 'evidence', reason: 'the page says the same in other words' }] });
    expect(overridden).toMatchObject({ changed: 1 });
  });

  it('lists an approved record for review once a check after its approval finds its excerpt gone, and keeps it published', async () => {
    const listed = async () => (await runAdminCommand(deps(), { op: 'records.stale' })) as { slug: string; reasons: string[]; verdict: string; sources: { status: string }[] }[];
    // Approved (with an override) after the drift was found: the owner has seen it.
    expect((await listed()).map((r) => r.slug)).not.toContain('deadline-rewritten');
    await runAdminCommand(deps(), { op: 'records.verify', ids: ['deadline-rewritten', 'deadline-guide'] });
    const due = await listed();
    expect(due.find((r) => r.slug === 'deadline-rewritten')).toMatchObject({ reasons: ['evidence'], verdict: 'fail', sources: [expect.objectContaining({ status: 'drifted' })] });
    expect(due.map((r) => r.slug)).not.toContain('deadline-guide');
    const shown = (await runAdminCommand(deps(), { op: 'records.show', id: 'deadline-rewritten' })) as { status: string };
    expect(shown.status).toBe('approved');
    // The owner's analytics count how the approved records' quoted sources stand.
    expect(((await runAdminCommand(deps(), { op: 'analytics.report', days: 30 })) as { evidence: unknown }).evidence).toEqual({ verified: 1, drifted: 1 });
  });

  it('shows a drifted record with its confidence one step lower when the owner chose so, and as stored otherwise', async () => {
    const handlers = (demote: boolean) => createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: silentLogger, cache, driftDemotesConfidence: demote });
    const cache = new SearchCache();
    const confidenceOf = async (demote: boolean, slug: string) => {
      const answer = (await handlers(demote).get_guidance({ ids: [slug], detail: 'full' })) as unknown as { structuredContent: { results: { confidence: string }[] } };
      return answer.structuredContent.results[0]!.confidence;
    };
    const searched = async (demote: boolean) => {
      const answer = (await handlers(demote).search_knowledge({ query: 'outbound call deadline failure', max_results: 10 })) as unknown as {
        structuredContent: { results: { slug: string; confidence: string }[] };
      };
      return Object.fromEntries(answer.structuredContent.results.map((r) => [r.slug, r.confidence]));
    };
    // Both fixtures are 'medium': the drifted one drops to 'low', the verified one stays.
    expect(await confidenceOf(false, 'deadline-rewritten')).toBe('medium');
    expect(await confidenceOf(true, 'deadline-rewritten')).toBe('low');
    expect(await confidenceOf(true, 'deadline-guide')).toBe('medium');
    expect((await searched(true))['deadline-rewritten']).toBe('low');
    // A check that finds nothing new keeps the corpus generation (answers kept in memory stay good)…
    const generation = async () => Number((await store.sql.query<{ generation: number }>('SELECT generation FROM corpus_stats WHERE id = 1'))[0]!.generation);
    const before = await generation();
    await runAdminCommand(deps(), { op: 'records.verify', ids: ['deadline-rewritten'] });
    expect(await generation()).toBe(before);
    // …one that changes a source's standing moves it on, so a kept answer is not shown again.
    const [drift] = await store.sql.query<{ url: string; excerpt_hash: string }>("SELECT url, excerpt_hash FROM source_checks WHERE status = 'drifted' LIMIT 1");
    await store.sql.query("INSERT INTO source_checks (url, excerpt_hash, status, how, checked_at) VALUES ($1, $2, 'verified', 'fetched', now())", [drift!.url, drift!.excerpt_hash]);
    expect(await generation()).toBe(before + 1);
    expect((await searched(true))['deadline-rewritten']).toBe('medium');
    // The page still reads differently: checking again drifts it back (the next test relies on that).
    await runAdminCommand(deps(), { op: 'records.verify', ids: ['deadline-rewritten'] });
    expect(await generation()).toBe(before + 2);
  });

  it('judges a file imported with --approve by the checks of its URL and excerpt, and warns when it was never checked', async () => {
    const copy = recordAt('deadline-rewritten-copy', '/rewritten');
    await expect(runAdminCommand(deps(), { op: 'records.import', records: [copy], approve: true })).rejects.toMatchObject({ details: { problems: [expect.objectContaining({ problem: expect.stringMatching(/^evidence:/) })] } });
    const fresh = reviewedRecord('deadline-unchecked', { sources: [{ title: 'Deadlines', url: at('/plain.txt'), publisher: 'Example Docs', evidence_excerpt: SENTENCE, relation: 'supports' }] });
    const imported = (await runAdminCommand(deps(), { op: 'records.import', records: [fresh], approve: true })) as { gates: { gates: { code: string; verdict: string; message: string }[] }[] };
    expect(imported.gates[0]!.gates.find((g) => g.code === 'evidence')).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/unverified/) });
  });

  it("runs as chatctx_verifier, the scheduled check's role, which may read the sources and write their checks, nothing else", async () => {
    await applyRoles(store.sql, { chatctx_verifier: { username: 'chatctx_verifier', password: 'not-used-here' } });
    await store.sql.query('SET ROLE chatctx_verifier');
    try {
      const fetcher = new UntrustedFetcher({ resolve, allowAddress: () => true, ca: tls.cert });
      const results = await verifySources(store.sql, fetcher, await sourcesToVerify(store.sql), { deadlineMs: 5000, maxBytes: 1024 * 1024 });
      expect(results.length).toBeGreaterThan(0);
      await expect(store.sql.query("UPDATE records SET title = 'changed'")).rejects.toThrow(/42501/);
      await expect(store.sql.query('SELECT recommendation FROM records')).rejects.toThrow(/42501/);
      await expect(store.sql.query("INSERT INTO feedback (category) VALUES ('other')")).rejects.toThrow(/42501/);
      await expect(store.sql.query('DELETE FROM source_checks')).rejects.toThrow(/42501/);
    } finally {
      await store.sql.query('RESET ROLE');
    }
  });
});
