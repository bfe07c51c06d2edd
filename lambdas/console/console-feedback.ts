/**
 * The feedback inbox: what agents sent through `submit_feedback`, newest first,
 * filtered by category and by whether an owner has dealt with it yet, with a count
 * per category; tick any number and mark them reviewed. The same admin commands as
 * `chatctx feedback list` and `chatctx feedback review`.
 *
 * Feedback is anonymous and its comment is an agent's free text: it is only ever
 * shown escaped, like every other value on these pages.
 */
import type { FeedbackRow } from '../feedback/feedback-repository.ts';
import { FEEDBACK_CATEGORIES } from '../../schema/tools.ts';
import { h, join, postForm, table, when, type Html } from './console-page.ts';
import { done, fields, formOf, refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps, noticeOf } from './console-context.ts';

type Category = (typeof FEEDBACK_CATEGORIES)[number];
type Reviewed = 'no' | 'yes' | 'all';

interface Filter {
  readonly category: Category | 'all';
  readonly reviewed: Reviewed;
}

/** The newest this many feedback of the chosen state are counted per category. */
export const FEEDBACK_COUNT_LIMIT = 500;
/** The table shows at most this many. */
export const FEEDBACK_SHOWN_LIMIT = 200;

const REVIEWED_LABELS: Readonly<Record<Reviewed, string>> = { no: 'Waiting for review', yes: 'Reviewed', all: 'All' };
const REVIEWED_FILTER: Readonly<Record<Reviewed, boolean | undefined>> = { no: false, yes: true, all: undefined };
const EMPTY: Readonly<Record<Reviewed, string>> = {
  no: 'No feedback is waiting for review.',
  yes: 'No feedback has been marked reviewed.',
  all: 'No feedback yet.',
};

const NOTICES: Record<string, string> = { reviewed: 'Marked reviewed.' };

/** The filter named by the query, or what is wrong with it. */
function filterOf(c: ConsoleContext): { filter: Filter; error?: string } {
  const category = c.req.query('category') || 'all';
  const reviewed = c.req.query('reviewed') || 'no';
  const filter: Filter = {
    category: category === 'all' || (FEEDBACK_CATEGORIES as readonly string[]).includes(category) ? (category as Filter['category']) : 'all',
    reviewed: Object.hasOwn(REVIEWED_LABELS, reviewed) ? (reviewed as Reviewed) : 'no',
  };
  if (filter.category !== category) return { filter, error: `There is no feedback category "${category}". Showing all categories.` };
  if (filter.reviewed !== reviewed) return { filter, error: 'Reviewed is "no", "yes" or "all". Showing feedback waiting for review.' };
  return { filter };
}

const filterUrl = (filter: Filter) => `/console/feedback?category=${encodeURIComponent(filter.category)}&reviewed=${filter.reviewed}`;

function option(value: string, label: string, selected: boolean): Html {
  return selected ? h`<option value="${value}" selected>${label}</option>` : h`<option value="${value}">${label}</option>`;
}

function filterForm(filter: Filter): Html {
  const categories = join([option('all', 'All categories', filter.category === 'all'), ...FEEDBACK_CATEGORIES.map((c) => option(c, c, filter.category === c))]);
  const states = join((Object.keys(REVIEWED_LABELS) as Reviewed[]).map((r) => option(r, REVIEWED_LABELS[r], filter.reviewed === r)));
  return h`<form method="get" action="/console/feedback" class="inline filter">
<p class="field"><label for="feedback-category">Category</label>
<select id="feedback-category" name="category">${categories}</select></p>
<p class="field"><label for="feedback-reviewed">Reviewed</label>
<select id="feedback-reviewed" name="reviewed">${states}</select></p>
<button type="submit">Show</button>
</form>`;
}

function countsTable(filter: Filter, rows: readonly FeedbackRow[]): Html {
  const capped = rows.length >= FEEDBACK_COUNT_LIMIT;
  const count = (category: string) => rows.filter((r) => r.category === category).length;
  const lines = FEEDBACK_CATEGORIES.map(
    (category) =>
      h`<tr><th scope="row"><a href="${filterUrl({ ...filter, category })}">${category}</a></th><td data-count="${category}">${count(category)}</td></tr>`,
  );
  return h`${table(`Feedback per category (${REVIEWED_LABELS[filter.reviewed].toLowerCase()})`, ['Category', 'Feedback'], lines)}
${capped ? h`<p class="hint">Counted over the newest ${FEEDBACK_COUNT_LIMIT}; there may be more. <code>chatctx feedback list</code> lists them all.</p>` : ''}`;
}

/** A date-time to the second, for telling feedback sent in the same minute apart. */
const exactTime = (iso: string) => new Date(iso).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';

function feedbackRow(row: FeedbackRow): Html {
  const select = row.reviewed_at
    ? h`<td>reviewed ${when(row.reviewed_at)}</td>`
    : h`<td><input type="checkbox" id="feedback-${row.id}" name="id" value="${row.id}"><label for="feedback-${row.id}" class="vh">Select feedback from ${exactTime(row.created_at)}</label></td>`;
  const record = row.record ? h`<a href="/console/records/${encodeURIComponent(row.record)}">${row.record}</a>` : h`<span class="empty">none named</span>`;
  const comment = row.comment ? h`${row.comment}` : h`<span class="empty">no comment</span>`;
  return h`<tr>${select}<th scope="row">${when(row.created_at)}</th><td>${row.category}</td><td>${record}</td><td class="comment">${comment}</td><td>${row.source}</td></tr>`;
}

function inbox(csrf: string, filter: Filter, rows: readonly FeedbackRow[]): Html {
  const shown = rows.slice(0, FEEDBACK_SHOWN_LIMIT);
  const list = table('Feedback, newest first', ['Select or state', 'Time', 'Category', 'Record', 'Comment', 'Sent from'], shown.map(feedbackRow), EMPTY[filter.reviewed]);
  const more = rows.length > FEEDBACK_SHOWN_LIMIT ? h`<p class="hint">Showing the newest ${FEEDBACK_SHOWN_LIMIT}. Mark these reviewed to see older ones.</p>` : '';
  if (!shown.some((r) => !r.reviewed_at)) return h`${list}${more}`;
  return postForm('/console/feedback/review', csrf, h`${list}${more}`, 'Mark reviewed', 'review');
}

async function feedbackPage(c: ConsoleContext, deps: ConsoleDeps, message: { notice?: string; error?: string } = {}, status: 200 | 400 | 404 = 200): Promise<Response> {
  const { filter, error } = filterOf(c);
  const reviewed = REVIEWED_FILTER[filter.reviewed];
  const all = (await deps.run({ op: 'feedback.list', reviewed, limit: FEEDBACK_COUNT_LIMIT })) as FeedbackRow[];
  const rows =
    filter.category === 'all' ? all : ((await deps.run({ op: 'feedback.list', category: filter.category, reviewed, limit: FEEDBACK_SHOWN_LIMIT + 1 })) as FeedbackRow[]);
  return render(
    c,
    {
      title: 'Feedback',
      section: '/console/feedback',
      notice: message.notice,
      error: message.error ?? error,
      body: h`<p>What agents sent with <code>submit_feedback</code>: anonymous, with no caller named. Mark what you have dealt with as reviewed; <code>chatctx feedback list</code> shows the same.</p>
<section aria-labelledby="feedback-filter"><h2 id="feedback-filter">Filter</h2>${filterForm(filter)}</section>
<section aria-labelledby="feedback-counts"><h2 id="feedback-counts">Per category</h2>${countsTable(filter, all)}</section>
<section aria-labelledby="feedback-inbox"><h2 id="feedback-inbox">${filter.category === 'all' ? 'All categories' : filter.category}: ${REVIEWED_LABELS[filter.reviewed].toLowerCase()}</h2>
${inbox(c.get('frame').csrf, filter, rows)}</section>`,
    },
    error && status === 200 ? 400 : status,
  );
}

export function registerFeedbackPages(app: ConsoleApp, deps: ConsoleDeps): void {
  app.get('/feedback', (c) => feedbackPage(c, deps, { notice: noticeOf(c, NOTICES) }));
  app.post('/feedback/review', async (c) => {
    const ids = fields(await formOf(c), 'id');
    if (ids.length === 0) return feedbackPage(c, deps, { error: 'Select at least one feedback to mark reviewed.' }, 400);
    try {
      await deps.run({ op: 'feedback.review', ids });
      return done(c, '/console/feedback', 'reviewed');
    } catch (error) {
      const { message, status } = refusal(error);
      return feedbackPage(c, deps, { error: message }, status === 404 ? 404 : 400);
    }
  });
}
