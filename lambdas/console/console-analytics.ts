/**
 * Analytics: the report `chatctx analytics` prints (the same `analytics.report`
 * admin command, so the same counts and the same retention purge), as summary
 * cards, searches per collection (and a filter to one collection), a chart of
 * searches per day by retrieval mode, coverage gaps, the records
 * most shown, feedback per category and per record, and how the quoted evidence
 * stands. Every chart is an SVG drawn here on the server (no script) and every
 * number in it is also in a table beside it. The report holds no query text, so
 * none can be shown.
 */
import type { AnalyticsResult } from '../admin/admin-operations.ts';
import type { CoverageGap } from '../analytics/search-analytics.ts';
import type { CollectionInfo } from '../records/collections.ts';
import { h, join, table, type Html } from './console-page.ts';
import { refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps } from './console-context.ts';
import { meter, perDayChart, percent } from './console-charts.ts';

export const DEFAULT_DAYS = 30;
const DAY_CHOICES = [1, 7, 14, 30, 90, 180, 365, 730, 3650] as const;

/** The window named by `?days=`, or what is wrong with it. */
function daysOf(c: ConsoleContext): { days: number; error?: string } {
  const text = c.req.query('days');
  if (text === undefined || text === '') return { days: DEFAULT_DAYS };
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > 3650) return { days: DEFAULT_DAYS, error: 'Days is a whole number from 1 to 3650.' };
  return { days: Number(text) };
}

/** The filter form: the period, and one collection or all of them. */
function daysForm(days: number, collections: readonly string[] = [], collection = ''): Html {
  const choices = [...new Set<number>([...DAY_CHOICES, days])].sort((a, b) => a - b);
  const options = join(choices.map((d) => (d === days ? h`<option value="${d}" selected>${d === 1 ? 'today' : `last ${d} days`}</option>` : h`<option value="${d}">${d === 1 ? 'today' : `last ${d} days`}</option>`)));
  const option = (value: string, label: string) => (value === collection ? h`<option value="${value}" selected>${label}</option>` : h`<option value="${value}">${label}</option>`);
  const names = join([option('', 'every collection'), ...collections.map((name) => option(name, name))]);
  return h`<form method="get" action="/console/analytics" class="inline filter">
<p class="field"><label for="analytics-days">Period</label>
<select id="analytics-days" name="days">${options}</select></p>
<p class="field"><label for="analytics-collection">Collection</label>
<select id="analytics-collection" name="collection">${names}</select></p>
<button type="submit">Show</button>
</form>`;
}

/** Searches per collection of the events' sets: a search counts for every collection it included. */
function collectionTable(report: AnalyticsResult): Html {
  const most = Math.max(1, ...report.per_collection.map((c) => c.searches));
  const rows = report.per_collection.map(
    (c) => h`<tr><th scope="row">${c.collection}</th><td>${c.searches} ${meter(c.searches, most, 'hybrid')}</td><td>${c.no_match}</td></tr>`,
  );
  return table('Searches per collection (a search counts for each collection it included)', ['Collection', 'Searches', 'No match'], rows, 'No searches in this period.');
}

function card(name: string, value: number, label: string): Html {
  return h`<li data-count="${name}"><strong>${value}</strong> ${label}</li>`;
}

function summary(report: AnalyticsResult): Html {
  const degraded = report.per_day.reduce((sum, d) => sum + d.degraded, 0);
  return h`<ul class="cards">
${card('searches', report.searches, 'searches')}
${card('hybrid', report.modes.hybrid.count, `hybrid (${percent(report.modes.hybrid.share)})`)}
${card('keyword_fallback', report.modes.keyword_fallback.count, `keyword fallback (${percent(report.modes.keyword_fallback.share)})`)}
${card('no_match', report.modes.no_match.count, `no match (${percent(report.modes.no_match.share)} of searches)`)}
${card('degraded', degraded, `degraded (${percent(report.degraded_rate)} of searches)`)}
${card('feedback', report.feedback.total, 'feedback')}
</ul>`;
}

function gapTable(kind: 'Technology' | 'Topic', gaps: readonly CoverageGap[]): Html {
  const most = Math.max(1, ...gaps.map((g) => g.no_match));
  const rows = gaps.map((g) => h`<tr><th scope="row">${g.name}</th><td>${g.no_match} ${meter(g.no_match, most, 'no_match')}</td><td>${g.searches}</td></tr>`);
  const plural = kind === 'Technology' ? 'technologies' : 'topics';
  return table(`${kind === 'Technology' ? 'Technologies' : 'Topics'} searched for without a match`, [kind, 'Searches with no match', 'Searches naming it'], rows, `No ${plural} ended in no match.`);
}

function topRecords(report: AnalyticsResult): Html {
  const most = Math.max(1, ...report.top_records.map((r) => r.shown));
  const rows = report.top_records.map(
    (r) => h`<tr><th scope="row"><a href="/console/records/${encodeURIComponent(r.slug)}">${r.title}</a> <code>${r.slug}</code></th><td>${r.shown} ${meter(r.shown, most, 'hybrid')}</td></tr>`,
  );
  return table('Records returned by the most searches', ['Record', 'Searches that returned it'], rows, 'No search returned a record in this period.');
}

function feedbackTables(report: AnalyticsResult): Html {
  const byCategory = Object.entries(report.feedback.by_category);
  const most = Math.max(1, ...byCategory.map(([, n]) => n));
  const categories = byCategory.map(([category, n]) => h`<tr><th scope="row">${category}</th><td>${n} ${meter(n, most, 'feedback')}</td></tr>`);
  const records = report.feedback.by_record.map(
    (r) => h`<tr><th scope="row">${r.title ? h`<a href="/console/records/${encodeURIComponent(r.record)}">${r.title}</a> ` : ''}<code>${r.record}</code></th><td>${r.total}</td><td>${join(
      Object.entries(r.counts)
        .filter(([, n]) => n > 0)
        .map(([category, n]) => h`<span class="tag">${category} ${n}</span> `),
    )}</td></tr>`,
  );
  return h`${report.feedback.total === 0 ? h`<p class="empty">No feedback in this period.</p>` : table('Feedback per category', ['Category', 'Feedback'], categories)}
<h3>Per record</h3>
${table('Feedback per record, most first', ['Record', 'Feedback', 'By category'], records, 'No feedback named a record in this period.')}
<p><a href="/console/feedback">Open the feedback inbox</a></p>`;
}

function evidenceTable(report: AnalyticsResult): Html {
  const entries = Object.entries(report.evidence).sort(([a], [b]) => (a < b ? -1 : 1));
  const most = Math.max(1, ...entries.map(([, n]) => n ?? 0));
  const rows = entries.map(([status, n]) => h`<tr><th scope="row">${status}</th><td>${n ?? 0} ${meter(n ?? 0, most, 'evidence')}</td></tr>`);
  return table("Approved records' quoted sources by their newest check", ['Status', 'Sources'], rows, 'No approved record quotes a source.');
}

function analyticsBody(report: AnalyticsResult): Html {
  const scope = report.collection ? h` Collection <strong>${report.collection}</strong>: the searches that included it, and feedback about its records.` : '';
  const command = `chatctx analytics --days ${report.days}${report.collection ? ` --collection ${report.collection}` : ''}`;
  return h`<p>Since ${report.since.slice(0, 10)} (${report.days === 1 ? 'today' : `the last ${report.days} UTC days`}).${scope} The same report as <code>${command}</code>; no query text is ever kept, nor which key searched.</p>
<section aria-labelledby="summary"><h2 id="summary">Summary</h2>${summary(report)}</section>
<section aria-labelledby="per-collection"><h2 id="per-collection">Searches per collection</h2>${collectionTable(report)}</section>
<section aria-labelledby="per-day"><h2 id="per-day">Searches by mode</h2>${perDayChart(report)}</section>
<section aria-labelledby="gaps"><h2 id="gaps">Coverage gaps</h2>
<p>Technologies and topics agents searched for that ended in no match: candidates for new records.</p>
<h3>Technologies</h3>${gapTable('Technology', report.coverage_gaps.technologies)}
<h3>Topics</h3>${gapTable('Topic', report.coverage_gaps.topics)}</section>
<section aria-labelledby="shown"><h2 id="shown">Records most shown</h2>${topRecords(report)}</section>
<section aria-labelledby="feedback"><h2 id="feedback">Feedback</h2>${feedbackTables(report)}</section>
<section aria-labelledby="evidence"><h2 id="evidence">Evidence</h2>${evidenceTable(report)}</section>
<p class="hint">Search events are kept ${report.retention_days} days; ${report.purged} older ${report.purged === 1 ? 'event was' : 'events were'} deleted when this report ran.</p>`;
}

async function analyticsPage(c: ConsoleContext, deps: ConsoleDeps): Promise<Response> {
  const { days, error } = daysOf(c);
  const collection = (c.req.query('collection') ?? '').trim();
  const page = { title: 'Analytics', section: '/console/analytics' as const };
  if (error) return render(c, { ...page, error, body: daysForm(days) }, 400);
  let names: string[] = [];
  try {
    names = ((await deps.run({ op: 'collections.list' })) as CollectionInfo[]).map((x) => x.name);
    const report = (await deps.run({ op: 'analytics.report', days, ...(collection ? { collection } : {}) })) as AnalyticsResult;
    return render(c, { ...page, body: h`${daysForm(days, names, collection)}${analyticsBody(report)}` });
  } catch (failure) {
    const { message, status } = refusal(failure);
    return render(c, { ...page, error: message, body: daysForm(days, names, collection) }, status === 503 ? 503 : status === 404 ? 404 : 400);
  }
}

export function registerAnalyticsPages(app: ConsoleApp, deps: ConsoleDeps): void {
  app.get('/analytics', (c) => analyticsPage(c, deps));
}
