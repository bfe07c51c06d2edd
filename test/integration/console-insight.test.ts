/**
 * The owner console's feedback inbox and analytics pages, in process over a real
 * PGlite store with the starter corpus: feedback sent through the real
 * `submit_feedback` tool, seen in the inbox, marked reviewed in the console and
 * seen so by the CLI's `feedback.list`; a scripted set of searches through the real
 * `search_knowledge` tool, whose counts the analytics page shows exactly as
 * `analytics.report` reports them, with no query text anywhere on the page.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole, type OwnerConsole } from '../../lambdas/console/console-app.ts';
import { FEEDBACK_SHOWN_LIMIT } from '../../lambdas/console/console-feedback.ts';
import { DEFAULT_DAYS } from '../../lambdas/console/console-analytics.ts';
import { bucketSize, bucketsOf, niceMax } from '../../lambdas/console/console-charts.ts';
import { runAdminCommand, type AdminDeps, type AnalyticsResult } from '../../lambdas/admin/admin-operations.ts';
import type { FeedbackRow } from '../../lambdas/feedback/feedback-repository.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { memoryStore, seededUseLite, type MemoryStore } from '../support/store.ts';
import { ConsoleClient } from '../support/console-client.ts';

let store: MemoryStore;
let deps: AdminDeps;
let console: OwnerConsole;

const KEYS = 'use-stable-keys-for-dynamic-react-lists';
const COMMENT = 'The <script>alert("owner")</script> example & the text are from an older React';

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: true, embedder: await seededUseLite() });
  deps = { sql: store.sql, secrets: { pepper: async () => store.pepper } };
  console = createConsole({ run: (command) => runAdminCommand(deps, command), target: 'test store', logger: store.logger });
});
afterAll(async () => store.sql.close());

async function signedIn(): Promise<ConsoleClient> {
  const client = new ConsoleClient(console);
  await client.signIn();
  return client;
}

async function sendFeedback(args: Record<string, unknown>): Promise<string> {
  const result = await store.tools.submit_feedback(args);
  expect(result.isError ?? false).toBe(false);
  return (result.structuredContent as { id: string }).id;
}

const checkboxes = (text: string) => [...text.matchAll(/<input type="checkbox" id="[^"]+" name="id" value="([^"]+)">/g)].map((m) => m[1]);
const count = (text: string, name: string) => Number(new RegExp(`data-count="${name}"[^>]*>(?:<strong>)?(\\d+)`).exec(text)?.[1]);

describe('the feedback inbox', () => {
  let outdated: string;
  let helpful: string;
  let missing: string;

  beforeAll(async () => {
    outdated = await sendFeedback({ category: 'outdated', record: KEYS, source: 'get_guidance', comment: COMMENT });
    helpful = await sendFeedback({ category: 'helpful', source: 'search_knowledge' });
    missing = await sendFeedback({ category: 'missing', source: 'search_knowledge', comment: 'Nothing on Fortran array slicing' });
  });

  it('lists what agents sent, escaped, with a count per category and the record linked', async () => {
    const client = await signedIn();
    const page = await client.page('/console/feedback');
    expect(page.status).toBe(200);
    expect(checkboxes(page.text).sort()).toEqual([outdated, helpful, missing].sort());
    expect(page.text).toContain(`href="/console/records/${KEYS}"`);
    expect(page.text).toContain('The &lt;script&gt;alert(&quot;owner&quot;)&lt;/script&gt; example &amp; the text');
    expect(page.text).not.toContain('<script>alert');
    expect(page.text).toMatch(/<label for="feedback-[^"]+" class="vh">Select feedback from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/label>/);
    expect(page.text).toContain('<label for="feedback-category">Category</label>');
    expect(page.text).toContain('<label for="feedback-reviewed">Reviewed</label>');
    expect(page.text).toContain('action="/console/feedback/review"');
    expect([count(page.text, 'outdated'), count(page.text, 'helpful'), count(page.text, 'missing'), count(page.text, 'incorrect')]).toEqual([1, 1, 1, 0]);
    expect(page.text).not.toMatch(/style=/);
  });

  it('filters by category, and refuses a category that does not exist', async () => {
    const client = await signedIn();
    const page = await client.page('/console/feedback?category=outdated&reviewed=no');
    expect(checkboxes(page.text)).toEqual([outdated]);
    expect(page.text).toContain('<option value="outdated" selected>');
    const wrong = await client.page('/console/feedback?category=%3Cb%3Ebold');
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('There is no feedback category &quot;&lt;b&gt;bold&quot;');
    for (const path of ['/console/feedback?reviewed=toString', '/console/feedback?category=constructor', '/console/feedback?done=toString']) {
      expect((await client.page(path)).status, path).toBeLessThan(500);
    }
  });

  it('marks the ticked feedback reviewed: it leaves the inbox, shows under reviewed, and the CLI agrees', async () => {
    const client = await signedIn();
    await client.page('/console/feedback');
    const response = await client.post('/console/feedback/review', { id: [outdated, missing] });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/feedback?done=reviewed');
    const after = await client.page('/console/feedback?done=reviewed');
    expect(after.text).toContain('Marked reviewed.');
    expect(checkboxes(after.text)).toEqual([helpful]);

    const reviewed = await client.page('/console/feedback?category=all&reviewed=yes');
    expect(checkboxes(reviewed.text)).toEqual([]);
    expect(reviewed.text).toContain('Nothing on Fortran array slicing');
    expect(reviewed.text.match(/<td>reviewed <time/g)).toHaveLength(2);
    expect(reviewed.text).not.toContain('action="/console/feedback/review"');
    const all = await client.page('/console/feedback?reviewed=all');
    expect(checkboxes(all.text)).toEqual([helpful]);
    expect(all.text.match(/<td>reviewed <time/g)).toHaveLength(2);

    const cli = (await runAdminCommand(deps, { op: 'feedback.list', reviewed: true })) as FeedbackRow[];
    expect(cli.map((r) => r.id).sort()).toEqual([outdated, missing].sort());
    expect(cli.every((r) => r.reviewed_at !== null)).toBe(true);
    const waiting = (await runAdminCommand(deps, { op: 'feedback.list', reviewed: false })) as FeedbackRow[];
    expect(waiting.map((r) => r.id)).toEqual([helpful]);
  });

  it('sees what the CLI marked, and refuses an empty selection or an unknown id without marking anything', async () => {
    const client = await signedIn();
    await client.page('/console/feedback');
    const none = await client.post('/console/feedback/review', {});
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('Select at least one feedback');
    const unknown = await client.post('/console/feedback/review', { id: [helpful, randomUUID()] });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Nothing was marked');
    expect(checkboxes((await client.page('/console/feedback')).text)).toEqual([helpful]);

    await runAdminCommand(deps, { op: 'feedback.review', ids: [helpful] });
    const empty = await client.page('/console/feedback');
    expect(checkboxes(empty.text)).toEqual([]);
    expect(empty.text).toContain('No feedback is waiting for review.');
    expect(FEEDBACK_SHOWN_LIMIT).toBeGreaterThan(0);
  });

  it('refuses a review form without the session token', async () => {
    const client = await signedIn();
    await client.page('/console/feedback');
    expect((await client.post('/console/feedback/review', { id: [helpful], _csrf: '' })).status).toBe(403);
  });
});

/** An encoder that always fails: the search degrades to keywords, as with a broken embedding service. */
const brokenEmbedder: Embedder = {
  provider: 'test',
  model: 'broken-test-model',
  dimensions: 512,
  embed: async () => {
    throw new Error('embedding service down');
  },
};

const QUERIES = {
  keys: 'Which key should a React list item use when rows can be reordered?',
  pagination: 'Paginating a large SQL table: offset is slow on deep pages',
  gap: 'How do I slice a Fortran coarray across images without copying?',
} as const;

describe('analytics', () => {
  let report: AnalyticsResult;
  let page: string;

  beforeAll(async () => {
    const degraded = createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger, embedder: brokenEmbedder });
    await store.tools.search_knowledge({ query: QUERIES.keys, technologies: ['React'] });
    await degraded.search_knowledge({ query: QUERIES.pagination, technologies: ['PostgreSQL'] });
    await store.tools.search_knowledge({ query: QUERIES.gap, technologies: ['Fortran'], topic: 'performance' });
    report = (await runAdminCommand(deps, { op: 'analytics.report', days: DEFAULT_DAYS })) as AnalyticsResult;
    const client = await signedIn();
    const response = await client.page('/console/analytics');
    expect(response.status).toBe(200);
    page = response.text;
  });

  it('ran the script as planned: three searches, one in each mode, the keyword one degraded', () => {
    expect(report.searches).toBe(3);
    expect([report.modes.hybrid.count, report.modes.keyword_fallback.count, report.modes.no_match.count]).toEqual([1, 1, 1]);
    expect(report.per_day.reduce((n, d) => n + d.degraded, 0)).toBe(1);
    expect(report.coverage_gaps.technologies.map((g) => g.name)).toContain('Fortran');
  });

  it('shows the same counts as analytics.report in its summary cards', () => {
    const degraded = report.per_day.reduce((n, d) => n + d.degraded, 0);
    expect(count(page, 'searches')).toBe(report.searches);
    expect(count(page, 'no_match')).toBe(report.modes.no_match.count);
    expect(count(page, 'hybrid')).toBe(report.modes.hybrid.count);
    expect(count(page, 'keyword_fallback')).toBe(report.modes.keyword_fallback.count);
    expect(count(page, 'degraded')).toBe(degraded);
    expect(count(page, 'feedback')).toBe(report.feedback.total);
    expect(report.feedback.total).toBe(3);
    expect(page).toContain('<li data-count="no_match"><strong>1</strong> no match (33.3% of searches)</li>');
    expect(page).toContain('<li data-count="degraded"><strong>1</strong> degraded (33.3% of searches)</li>');
  });

  it('draws searches per day as an SVG with a name, then the same numbers in a captioned table', () => {
    expect(page).toMatch(/<svg class="chart" viewBox="0 0 640 260" width="640" height="260" role="img" aria-labelledby="chart-per-day-title chart-per-day-desc">/);
    expect(page).toContain('<title id="chart-per-day-title">Searches per day by mode</title>');
    const chartEnd = page.indexOf('</svg>', page.indexOf('class="chart"'));
    const caption = page.indexOf("<caption>Searches per day by mode: the numbers in the chart</caption>");
    expect(caption).toBeGreaterThan(chartEnd);
    const today = report.per_day[report.per_day.length - 1]!;
    expect(page).toContain(
      `<tr><th scope="row">${today.day}</th><td>${today.hybrid}</td><td>${today.keyword_fallback}</td><td>${today.no_match}</td><td>${today.searches}</td><td>${today.degraded}</td></tr>`,
    );
    expect(page.match(/<rect class="bar-/g)?.length).toBeGreaterThanOrEqual(2);
    expect(page).not.toMatch(/style=/);
  });

  it('lists the coverage gaps, the records most shown, feedback per category and the evidence', () => {
    expect(page).toMatch(/<th scope="row">Fortran<\/th><td>1 <svg class="meter"/);
    expect(page).toMatch(/<th scope="row">performance<\/th><td>1 <svg class="meter"/);
    expect(report.top_records.length).toBeGreaterThan(0);
    for (const record of report.top_records) expect(page).toContain(`href="/console/records/${record.slug}"`);
    expect(page).toMatch(/<th scope="row">outdated<\/th><td>1 <svg/);
    expect(page).toContain(`<code>${KEYS}</code>`);
    expect(page).toContain('Evidence</h2>');
    for (const [status, n] of Object.entries(report.evidence)) expect(page).toContain(`<th scope="row">${status}</th><td>${n} <svg`);
  });

  it('never shows query text', () => {
    for (const query of Object.values(QUERIES)) {
      for (const phrase of query.split(/[?:,]/).map((p) => p.trim()).filter((p) => p.length > 12)) expect(page).not.toContain(phrase);
    }
    expect(page).not.toContain('coarray');
    expect(page).not.toContain('reordered');
  });

  it('answers another window, and refuses one out of range', async () => {
    const client = await signedIn();
    const week = await client.page('/console/analytics?days=7');
    expect(week.text).toContain('<option value="7" selected>');
    expect(count(week.text, 'searches')).toBe(3);
    const long = await client.page('/console/analytics?days=365');
    expect(long.text).toContain('Searches per week by mode');
    const wrong = await client.page('/console/analytics?days=0');
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Days is a whole number from 1 to 3650.');
    expect((await client.page('/console/analytics?days=3651')).status).toBe(400);
  });

  it('shows searches per collection, and filters the report to one collection', async () => {
    expect(page).toMatch(/<th scope="row">public<\/th><td>3 <svg class="meter"/);
    expect(page).toContain('<option value="" selected>every collection</option>');
    await runAdminCommand(deps, { op: 'collections.create', name: 'insight-team' });
    const client = await signedIn();
    const filtered = await client.page('/console/analytics?collection=insight-team');
    expect(filtered.status).toBe(200);
    expect(filtered.text).toContain('<option value="insight-team" selected>insight-team</option>');
    expect(filtered.text).toContain('<code>chatctx analytics --days 30 --collection insight-team</code>');
    expect(count(filtered.text, 'searches')).toBe(0);
    expect(count(filtered.text, 'feedback')).toBe(0);
    const unknown = await client.page('/console/analytics?collection=nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('No collection is named');
  });
});

describe('chart arithmetic', () => {
  it('picks a round top for the scale and groups long windows', () => {
    expect([0, 1, 2, 3, 7, 10, 11, 60, 101].map(niceMax)).toEqual([1, 1, 2, 5, 10, 10, 20, 100, 200]);
    expect([1, 62, 63, 730, 731, 3650].map(bucketSize)).toEqual([1, 1, 7, 7, 30, 30]);
    const days = Array.from({ length: 10 }, (_, i) => ({ day: `2026-01-${String(i + 1).padStart(2, '0')}`, searches: 2, hybrid: 1, keyword_fallback: 0, no_match: 1, degraded: 0 }));
    const buckets = bucketsOf(days, 7);
    expect(buckets.map((b) => [b.from, b.to, b.searches, b.no_match])).toEqual([
      ['2026-01-01', '2026-01-07', 14, 7],
      ['2026-01-08', '2026-01-10', 6, 3],
    ]);
  });
});
