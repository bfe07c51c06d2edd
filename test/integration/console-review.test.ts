/**
 * The console's review queue and records pages, in process over a real PGlite store
 * (with the starter corpus) and the real admin operations: a candidate whose gate
 * fails, refused without an override and approved with one (then served by
 * get_guidance, with the reviewer and the override in its history); a pending
 * revision's word diff; rejecting; an owner's search with shown and cut
 * candidates; deprecating with a successor; the collections page, records by
 * collection, and moving a record with the Move form (its history shows the move).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole, type OwnerConsole } from '../../lambdas/console/console-app.ts';
import { gateSummary } from '../../lambdas/console/console-queue.ts';
import { technologiesOf } from '../../lambdas/console/console-records.ts';
import { wordDiff } from '../../lambdas/console/console-record-view.ts';
import { movesTable } from '../../lambdas/console/console-collections.ts';
import { runAdminCommand, type AdminDeps } from '../../lambdas/admin/admin-operations.ts';
import { CUT_REASONS, type OwnerSearchResult } from '../../lambdas/retrieval/search-explain.ts';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { reviewedRecord } from '../support/records.ts';
import { ConsoleClient } from '../support/console-client.ts';

let store: MemoryStore;
let deps: AdminDeps;
let owner: OwnerConsole;
let client: ConsoleClient;
const run = (command: Record<string, unknown>) => runAdminCommand(deps, command);
const guidance = async (slug: string) => (await store.tools.get_guidance({ ids: [slug] })).structuredContent as { results: { slug: string; title: string }[]; missing: string[]; superseded_by?: Record<string, string> };

beforeAll(async () => {
  store = await memoryStore();
  deps = { sql: store.sql, secrets: { pepper: async () => store.pepper } };
  owner = createConsole({ run: (command) => runAdminCommand(deps, command), target: 'test store', logger: store.logger });
  client = new ConsoleClient(owner);
  await client.signIn();
}, 300_000);
afterAll(async () => store?.sql.close());

/** Words of a page without its tags, for sentences that span markup. */
const words = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

describe('the review queue', () => {
  const OLD = 'console-review-old';

  it('lists a candidate with its failing gate, and its page shows the report, what to do, the text, the sources and an override per failing gate', async () => {
    await run({ op: 'records.import', records: [reviewedRecord(OLD, { reviewed_at: '2009-06-01' })] });
    const queue = await client.page('/console/queue');
    expect(queue.status).toBe(200);
    expect(queue.text).toContain(`<a href="/console/queue/${OLD}">${OLD}</a>`);
    expect(words(queue.text)).toContain('new candidate');
    expect(words(queue.text)).toContain('1 gate fails');

    const item = await client.page(`/console/queue/${OLD}`);
    expect(item.status).toBe(200);
    const text = words(item.text);
    expect(text).toMatch(/freshness\s*✗\s*fail/);
    expect(text).toContain('Re-read the sources, then set reviewed_at');
    expect(text).toContain("The candidate's text");
    expect(item.text).toContain('<a href="https://nodejs.org/api/timers.html">Timers</a>');
    expect(text).toContain('The timer functions within Node.js implement a similar API');
    expect(text).toMatch(/declared verified on \d{4}-\d{2}-\d{2}/);
    expect(item.text).toContain('name="override" value="freshness"');
    expect(item.text).toContain('<label for="override-freshness">Override freshness</label>');
    expect(item.text).toContain('<label for="reason-freshness">Reason for overriding freshness</label>');
    expect(item.text).not.toContain('value="evidence"');
  });

  it('refuses to approve over a failing gate without an override or with too short a reason, keeping what was typed', async () => {
    const bare = await client.post(`/console/queue/${OLD}/approve`, { reviewer: 'Console Owner' });
    expect(bare.status).toBe(400);
    const bareText = await bare.text();
    expect(bareText).toContain('nothing was approved');
    expect(bareText).toMatch(/freshness: /);
    expect(bareText).toContain('value="Console Owner"');

    const short = await client.post(`/console/queue/${OLD}/approve`, { reviewer: 'Console Owner', override: 'freshness', reason_freshness: 'too short' });
    expect(short.status).toBe(400);
    const shortText = await short.text();
    expect(shortText).toContain('at least 10 characters');
    expect(shortText).toContain('>too short</textarea>');
    expect(shortText).toMatch(/value="freshness" checked/);
    expect((await guidance(OLD)).missing).toEqual([OLD]);
  });

  it('approves with an override and its reason: gone from the queue, served by get_guidance, reviewer and override in the history', async () => {
    const reason = 'Re-read the Node.js timers page today; nothing changed.';
    const approved = await client.post(`/console/queue/${OLD}/approve`, { reviewer: 'Console Owner', override: 'freshness', reason_freshness: reason });
    expect(approved.status).toBe(303);
    expect(approved.headers.get('location')).toBe('/console/queue?done=approved');
    const queue = await client.page('/console/queue?done=approved');
    expect(queue.text).toContain('Approved.');
    expect(queue.text).not.toContain(`/console/queue/${OLD}"`);
    expect((await guidance(OLD)).results.map((r) => r.slug)).toEqual([OLD]);

    const page = await client.page(`/console/records/${OLD}`);
    expect(page.status).toBe(200);
    const text = words(page.text);
    expect(text).toContain('Status: approved');
    expect(text).toContain('approved by Console Owner');
    expect(text).toContain(`freshness : ${reason}`);
  });

  it('shows a pending revision as a word diff against the approved version, and the record page links to it', async () => {
    const SERVED = 'console-review-served';
    const first = reviewedRecord(SERVED);
    await run({ op: 'records.import', records: [first], approve: true, reviewer: 'owner' });
    const changed = { ...first, recommendation: `${String(first.recommendation).replace('every', 'each outbound')} Log every timeout.` };
    await run({ op: 'records.import', records: [changed] });
    expect(words((await client.page('/console/queue')).text)).toContain('revision of an approved record');

    const item = await client.page(`/console/queue/${SERVED}`);
    expect(item.text).toContain('Changes against the approved version 1');
    expect(item.text).toMatch(/<ins><span class="visually-hidden">added: <\/span>[^<]*outbound[^<]*<\/ins>/);
    expect(item.text).toMatch(/<del><span class="visually-hidden">removed: <\/span>every<\/del>/);
    expect(item.text).toContain('<h3>Recommendation</h3>');

    const record = await client.page(`/console/records/${SERVED}`);
    expect(record.text).toContain(`href="/console/records/${SERVED}/diff?from=1&amp;to=pending"`);
    const diff = await client.page(`/console/records/${SERVED}/diff?from=1&to=pending`);
    expect(diff.status).toBe(200);
    expect(words(diff.text)).toContain('From version 1 to the revision waiting for review');
    expect(diff.text).toContain('<ins>');
    expect((await client.page(`/console/records/${SERVED}/diff?from=7&to=pending`)).status).toBe(404);
  });

  it('rejects the revision with a reason: the approved version keeps serving, and the history shows who and why', async () => {
    const SERVED = 'console-review-served';
    const short = await client.post(`/console/queue/${SERVED}/reject`, { reviewer: 'Console Owner', reason: 'no' });
    expect(short.status).toBe(400);
    expect(await short.text()).toContain('at least 10 characters');
    const reason = 'The outbound wording narrows the advice for no reason.';
    const rejected = await client.post(`/console/queue/${SERVED}/reject`, { reviewer: 'Console Owner', reason });
    expect(rejected.status).toBe(303);
    expect(rejected.headers.get('location')).toBe('/console/queue?done=rejected');
    const queue = await client.page('/console/queue?done=rejected');
    expect(queue.text).toContain('Rejected.');
    expect(queue.text).toContain('Nothing waits for review');
    expect((await guidance(SERVED)).results[0]!.title).toBe(reviewedRecord(SERVED).title);
    const text = words((await client.page(`/console/records/${SERVED}`)).text);
    expect(text).toMatch(/Rejected texts Kind Rejected by When Reason revision Console Owner [^.]+ UTC The outbound wording/);
    expect(text).toContain(reason);
  });

  it('rejects a candidate: its record page says rejected and keeps the reason', async () => {
    const GONE = 'console-review-gone';
    await run({ op: 'records.import', records: [reviewedRecord(GONE)] });
    const reason = 'Already covered by the timers record we serve.';
    expect((await client.post(`/console/queue/${GONE}/reject`, { reviewer: 'Console Owner', reason })).status).toBe(303);
    expect((await client.page(`/console/queue/${GONE}`)).status).toBe(404);
    const page = await client.page(`/console/records/${GONE}`);
    expect(page.status).toBe(200);
    expect(words(page.text)).toContain('Status: rejected');
    expect(words(page.text)).toContain(reason);
  });

  it('summarises gates in words', () => {
    const gate = (verdict: 'pass' | 'warn' | 'fail') => ({ code: 'evidence' as const, verdict, message: '' });
    const report = (...verdicts: ('pass' | 'warn' | 'fail')[]) => ({ gates: { slug: 's', verdict: 'fail' as const, gates: verdicts.map(gate) } });
    expect(String(gateSummary(report('fail', 'fail', 'warn')))).toContain('2 gates fail, 1 gate warns');
    expect(String(gateSummary(report('pass')))).toContain('all gates pass');
    expect(String(gateSummary({ gates: null }))).toContain('not judged');
  });
});

describe('records', () => {
  it('searches as an agent would and shows the answer, the mode, the candidates and why each was cut', async () => {
    const question = 'password hashing algorithm for user accounts';
    const page = await client.page(`/console/records?q=${encodeURIComponent(question)}`);
    expect(page.status).toBe(200);
    const expected = (await run({ op: 'records.search', arguments: { query: question } })) as OwnerSearchResult;
    const text = words(page.text);
    expect(page.text).toContain('<a href="/console/records/hash-passwords-with-argon2id-or-bcrypt">');
    expect(text).toContain(`Mode ${expected.explain.mode}`);
    expect(text).toContain(`Total candidates ${expected.explain.total_candidates}`);
    expect(text).toContain(`Profile ${expected.explain.profile.name}`);
    const cut = expected.explain.candidates.filter((c) => c.outcome === 'cut');
    expect(cut.length).toBeGreaterThan(0);
    expect(page.text.match(/>cut<\/span>/g)?.length).toBe(cut.length);
    expect(page.text.match(/>shown<\/span>/g)?.length).toBe(expected.result.results.length);
    expect(text).toContain(cut[0]!.reason!);
    expect(Object.values(CUT_REASONS)).toContain(cut[0]!.reason);
    expect(page.text).toContain('value="password hashing algorithm for user accounts"');
    expect(text).toContain('All records');
    expect(page.text).toContain('<a href="/console/records/use-keyset-pagination-instead-of-large-offset">');
  });

  it('says what is wrong with a question search would refuse, and reads technologies as a comma-separated list', async () => {
    const page = await client.page('/console/records?q=x');
    expect(page.status).toBe(400);
    expect(page.text).toContain('Invalid search_knowledge arguments');
    expect(technologiesOf(' Node.js, , PostgreSQL ')).toEqual(['Node.js', 'PostgreSQL']);
    expect((await client.page('/console/records?q=slow+queries&technologies=PostgreSQL')).status).toBe(200);
  });

  it('shows an older version, and a record that does not exist is a 404', async () => {
    expect(words((await client.page('/console/records/console-review-old?version=1')).text)).toContain('Version 1, approved by Console Owner');
    expect((await client.page('/console/records/console-review-old?version=9')).status).toBe(404);
    expect((await client.page('/console/records/no-such-record')).status).toBe(404);
  });

  it('deprecates a record with a reason and a successor; get_guidance names the successor', async () => {
    await run({ op: 'records.import', records: [reviewedRecord('console-old-way'), reviewedRecord('console-new-way')], approve: true, reviewer: 'owner' });
    const page = await client.page('/console/records/console-old-way');
    expect(page.text).toContain('<label for="deprecate-successor">Successor (slug)</label>');
    const unknown = await client.post('/console/records/console-old-way/deprecate', { reason: 'replaced', superseded_by: 'no-such-successor' });
    expect(unknown.status).toBe(400);
    const unknownText = await unknown.text();
    expect(unknownText).toContain('no-such-successor');
    expect(unknownText).toContain('>replaced</textarea>');

    const done = await client.post('/console/records/console-old-way/deprecate', { reason: 'The new way covers retries too.', superseded_by: 'console-new-way' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/console/records/console-old-way?done=deprecated');
    const after = await client.page('/console/records/console-old-way?done=deprecated');
    expect(after.text).toContain('Deprecated. Search and get_guidance no longer return it.');
    expect(words(after.text)).toContain('The new way covers retries too.');
    expect(after.text).toContain('Replaced by <a href="/console/records/console-new-way">console-new-way</a>');
    expect(after.text).not.toContain('>Deprecate</button>');
    expect((await guidance('console-old-way')).superseded_by).toEqual({ 'console-old-way': 'console-new-way' });
  });

  it('lists records with their collection, and filters them by one', async () => {
    await run({ op: 'collections.create', name: 'console-team' });
    await run({ op: 'records.import', records: [reviewedRecord('console-team-runbook')], approve: true, reviewer: 'owner', collection: 'console-team' });
    const all = await client.page('/console/records');
    expect(all.text).toContain('<th scope="col">Collection</th>');
    expect(all.text).toMatch(/console-team-runbook<\/a><\/th>.*?<td>console-team<\/td>/s);
    const only = await client.page('/console/records?collection=console-team');
    expect(only.status).toBe(200);
    expect(words(only.text)).toContain('Records in console-team');
    expect(only.text).toContain('<a href="/console/records/console-team-runbook">');
    expect(only.text).not.toContain('<a href="/console/records/console-new-way">');
    expect((await client.page('/console/records?collection=nowhere')).status).toBe(400);
  });

  it('moves a record with a reviewer and a reason; the move is in its history, and a form without the token is refused', async () => {
    const page = await client.page('/console/records/console-team-runbook');
    expect(words(page.text)).toContain('Collection: console-team');
    expect(page.text).toContain('<form method="post" action="/console/records/console-team-runbook/move">');
    expect(page.text).toMatch(/<select id="move-to" name="to"><option value="public">public<\/option><\/select>/);
    expect(words(page.text)).toContain('Never moved.');

    const forged = await client.post('/console/records/console-team-runbook/move', { _csrf: 'not-the-token', to: 'public', reason: 'cleared for every customer' });
    expect(forged.status).toBe(403);
    const short = await client.post('/console/records/console-team-runbook/move', { to: 'public', reviewer: 'Console Owner', reason: 'too short' });
    expect(short.status).toBe(400);
    const shortText = await short.text();
    expect(shortText).toContain('at least 10 characters');
    expect(shortText).toContain('>too short</textarea>');
    expect(shortText).toContain('value="Console Owner"');
    expect((await run({ op: 'records.show', id: 'console-team-runbook' })) as { collection: string }).toMatchObject({ collection: 'console-team' });

    const moved = await client.post('/console/records/console-team-runbook/move', { to: 'public', reviewer: 'Console Owner', reason: 'cleared for every customer' });
    expect(moved.status).toBe(303);
    expect(moved.headers.get('location')).toBe('/console/records/console-team-runbook?done=moved');
    const after = await client.page('/console/records/console-team-runbook?done=moved');
    const text = words(after.text);
    expect(text).toContain('Moved. Searches see it in its new collection at once');
    expect(text).toContain('Collection: public');
    expect(text).toMatch(/console-team → public Console Owner .* UTC cleared for every customer/);
    expect(after.text).toMatch(/<select id="move-to" name="to"><option value="console-team">console-team<\/option><\/select>/);
  });

  it('lists the collections and creates one, keeping what was typed when refused', async () => {
    const page = await client.page('/console/collections');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/console/collections" aria-current="page">Collections</a>');
    expect(page.text).toContain('<a href="/console/records?collection=console-team">console-team</a>');
    const reserved = await client.post('/console/collections', { name: 'feedback', description: 'Agent notes' });
    expect(reserved.status).toBe(400);
    const reservedText = await reserved.text();
    expect(reservedText).toContain('reserved');
    expect(reservedText).toContain('value="Agent notes"');
    const twice = await client.post('/console/collections', { name: 'console-team' });
    expect(twice.status).toBe(409);
    const created = await client.post('/console/collections', { name: 'console-partners', description: 'For partner agents' });
    expect(created.status).toBe(303);
    const after = await client.page('/console/collections?done=created');
    expect(after.text).toContain('The collection is created.');
    expect(words(after.text)).toContain('console-partners For partner agents 0 0 0 0');
  });

  it('escapes what a record says', () => {
    expect(String(wordDiff('a <b>', 'a <i>'))).not.toContain('<i>');
    const move = { from: 'public', to: 'team', reviewer: '<b>owner</b>', reason: 'moved <script>x</script>', moved_at: '2026-01-01T00:00:00.000Z' };
    expect(String(movesTable([move]))).not.toMatch(/<b>|<script>/);
  });
});
