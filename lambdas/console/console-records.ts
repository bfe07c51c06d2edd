/**
 * Records: search them as an agent would, with the retrieval details (mode,
 * candidates, profile, and why each judged candidate was shown or cut:
 * `records.search`), the list of every record, and one record's page: the served or
 * an older approved version, its sources, its history (approvals with their
 * reviewers and overrides, the revision waiting, rejections, the deprecation),
 * word diffs between versions, its collection and moves, moving it to another
 * collection (`console-collections.ts`), and deprecating it with a successor. The
 * same admin commands as `chatctx records search|list|show|history|diff|move|deprecate`.
 */
import type { RecordSummary } from '../records/record-review.ts';
import type { RecordHistory } from '../records/record-history.ts';
import type { OwnerSearchAnswer } from '../admin/admin-operations.ts';
import type { CollectionInfo } from '../records/collections.ts';
import { h, join, postForm, table, textField, when, type Html } from './console-page.ts';
import { done, field, formOf, refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps, noticeOf } from './console-context.ts';
import { changesView, gateTable, queuePath, recordPath, recordText, sourcesTable, type RecordDiff, type ShownRecord } from './console-record-view.ts';
import { moveForm, moveOf, movesTable, type MoveTyped } from './console-collections.ts';

const NOTICES: Record<string, string> = {
  deprecated: 'Deprecated. Search and get_guidance no longer return it.',
  moved: 'Moved. Searches see it in its new collection at once; the move is in the history below.',
};

/** The technologies field: comma-separated names. */
export const technologiesOf = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

function searchForm(q: string, technologies: string): Html {
  return h`<form method="get" action="/console/records" class="search" role="search" aria-label="Search the records">
${textField('search-q', 'q', 'Question', { value: q, type: 'search', required: true, hint: 'Ask as an agent would: the decision, the symptom, the constraint.' })}
${textField('search-technologies', 'technologies', 'Technologies (comma-separated, optional)', { value: technologies, hint: 'For example: Node.js, PostgreSQL' })}
<button type="submit">Search</button>
</form>`;
}

function searchResults(found: OwnerSearchAnswer): Html {
  const { result, explain } = found;
  const answer = result.results.length
    ? h`<ol class="results">${join(result.results.map((r) => h`<li><a href="${recordPath(r.slug)}">${r.title}</a> <code>${r.slug}</code><br>${r.summary ?? r.recommendation}${r.applicability_note ? h`<br><span class="hint">${r.applicability_note}</span>` : ''}</li>`))}</ol>`
    : h`<p class="empty">No record answers this question; the agent is told so (no_match)${result.suggestions.length ? h`, with these suggestions: ${result.suggestions.join('; ')}` : ''}.</p>`;
  const rows = explain.candidates.map(
    (cand) =>
      h`<tr><th scope="row"><a href="${recordPath(cand.slug)}">${cand.slug}</a></th><td class="text">${cand.title}</td><td>${cand.score.toFixed(3)}</td><td>${cand.probability.toFixed(2)}</td><td><span class="${cand.outcome === 'shown' ? 'verdict-pass' : 'verdict-warn'}">${cand.outcome}</span></td><td class="text">${cand.reason ?? 'not cut'}${cand.note ? h` (${cand.note})` : ''}</td></tr>`,
  );
  const profile = explain.profile;
  return h`<section aria-labelledby="answer"><h2 id="answer">What the agent gets</h2>${answer}</section>
<section aria-labelledby="details"><h2 id="details">Retrieval details</h2>
<dl class="facts">
<dt>Collections searched</dt><dd>${found.collections.every_collection ? h`every one (${found.collections.names.join(', ')}): an owner sees everything; a guest sees public and a key its own` : found.collections.names.join(', ')}</dd>
<dt>Mode</dt><dd>${explain.mode}${result.retrieval.degraded ? h` (degraded${result.retrieval.degraded_reason ? h`: ${result.retrieval.degraded_reason}` : ''})` : ''}</dd>
<dt>Total candidates</dt><dd>${explain.total_candidates}</dd>
<dt>Profile</dt><dd>${profile.name} (threshold ${profile.threshold}, at least ${Math.round(profile.min_share_of_top * 100)}% of the best score; ${profile.calibrated ? 'calibrated' : 'not calibrated for this encoder yet'})</dd>
<dt>Shown</dt><dd>${result.results.length}${result.retrieval.truncated ? ' (the token budget cut the answer)' : ''}</dd>
</dl>
${table('Candidates judged, and why each was shown or cut', ['Record', 'Title', 'Score', 'Probability', 'Outcome', 'Why cut'], rows, 'No record was a candidate.', true)}
</section>`;
}

function recordRows(records: readonly RecordSummary[]): Html[] {
  return records.map(
    (r) =>
      h`<tr><th scope="row"><a href="${recordPath(r.slug)}">${r.slug}</a></th><td class="text">${r.title}</td><td>${r.status}${r.pending_revision ? h`, <a href="${queuePath(r.slug)}">revision waiting</a>` : ''}</td><td>${r.collection}</td><td>${r.content_version}</td><td>${when(r.updated_at)}</td></tr>`,
  );
}

async function recordsPage(c: ConsoleContext, deps: ConsoleDeps): Promise<Response> {
  const q = (c.req.query('q') ?? '').trim();
  const technologies = c.req.query('technologies') ?? '';
  let results: Html = h``;
  let error: string | undefined;
  let status: 200 | 400 = 200;
  if (q) {
    try {
      const found = (await deps.run({ op: 'records.search', arguments: { query: q, technologies: technologiesOf(technologies) } })) as OwnerSearchAnswer;
      results = searchResults(found);
    } catch (failure) {
      error = refusal(failure).message;
      status = 400;
    }
  }
  const collection = (c.req.query('collection') ?? '').trim();
  let records: RecordSummary[] = [];
  try {
    records = (await deps.run({ op: 'records.list', ...(collection ? { collection } : {}) })) as RecordSummary[];
  } catch (failure) {
    error = refusal(failure).message;
    status = 400;
  }
  return render(
    c,
    {
      title: 'Records',
      section: '/console/records',
      error,
      body: h`<section aria-labelledby="search"><h2 id="search">Search as an agent would</h2>
<p>The same search agents run (search_knowledge), without counting it in the analytics.</p>
${searchForm(q, technologies)}</section>
${results}
<section aria-labelledby="all"><h2 id="all">${collection ? `Records in ${collection}` : 'All records'}</h2>
${collection ? h`<p><a href="/console/records">Show every collection</a></p>` : ''}
${table(collection ? `The records of ${collection}` : 'Every record', ['Record', 'Title', 'Status', 'Collection', 'Version', 'Updated'], recordRows(records), 'No records yet. Import some with chatctx records import.', true)}
</section>`,
    },
    status,
  );
}

function notFound(c: ConsoleContext, message: string): Response {
  return render(c, { title: 'No such record', section: '/console/records', error: message, body: h`<p><a href="/console/records">Back to all records</a>.</p>` }, 404);
}

function historyView(slug: string, history: RecordHistory): Html {
  const rows = history.versions.map((v, i) => {
    const previous = history.versions[i - 1]?.content_version;
    const overrides = v.overrides.length ? join(v.overrides.map((o) => h`<li><code>${o.gate}</code>: ${o.reason}</li>`)) : '';
    return h`<tr><th scope="row"><a href="${recordPath(slug)}?version=${v.content_version}">Version ${v.content_version}</a></th><td>${v.approved_by ?? 'unknown'}</td><td>${when(v.approved_at)}</td>
<td>${v.verdict ?? 'not judged'}</td><td class="text">${overrides ? h`<ul>${overrides}</ul>` : 'none'}</td>
<td>${previous === undefined ? 'first version' : h`<a href="${recordPath(slug)}/diff?from=${previous}&amp;to=${v.content_version}">Changes from version ${previous}</a>`}</td></tr>`;
  });
  const pending = history.pending_revision
    ? h`<p>A revision waits for review since ${when(history.pending_revision.staged_at)}: <a href="${recordPath(slug)}/diff?from=${history.content_version}&amp;to=pending">its changes</a>, <a href="${queuePath(slug)}">review it</a>.</p>`
    : '';
  const rejections = history.rejections.map(
    (r) => h`<tr><th scope="row">${r.kind === 'candidate' ? 'candidate' : 'revision'}</th><td>${r.rejected_by}</td><td>${when(r.rejected_at)}</td><td class="text">${r.reason}</td></tr>`,
  );
  const deprecation = history.deprecation
    ? h`<p>Deprecated ${when(history.deprecation.deprecated_at)}${history.deprecation.reason ? h`: ${history.deprecation.reason}` : ''}.${history.deprecation.superseded_by ? h` Replaced by <a href="${recordPath(history.deprecation.superseded_by)}">${history.deprecation.superseded_by}</a>.` : ''}</p>`
    : '';
  return h`<h2 id="history">History</h2>
${table('Approved versions', ['Version', 'Approved by', 'When', 'Gates', 'Overrides', 'Changes'], rows, 'Never approved.')}
${pending}${deprecation}
<h3>Rejected texts</h3>
${table('Rejected texts', ['Kind', 'Rejected by', 'When', 'Reason'], rejections, 'Nothing was rejected.')}
${movesTable(history.moves)}`;
}

function deprecateForm(slug: string, csrf: string, typed: { reason?: string; successor?: string }): Html {
  return h`<h2 id="deprecate">Deprecate</h2>
<p>Withdraws the record from search and get_guidance; an agent asking for it by slug is told its successor.</p>
${postForm(
  `${recordPath(slug)}/deprecate`,
  csrf,
  h`<p class="field"><label for="deprecate-reason">Reason</label>
<textarea id="deprecate-reason" name="reason">${typed.reason ?? ''}</textarea></p>
${textField('deprecate-successor', 'superseded_by', 'Successor (slug)', { value: typed.successor, hint: 'An approved record that replaces this one (optional).' })}`,
  'Deprecate',
  'danger',
)}`;
}

function summaryOf(shown: ShownRecord): Html {
  const a = shown.approval;
  const version = shown.shown_version === shown.content_version ? '' : h` <strong>This is version ${shown.shown_version}; version ${shown.content_version} is served.</strong>`;
  const pending = shown.pending_revision ? h` A revision waits for review: <a href="${queuePath(shown.slug)}">review it</a>.` : '';
  const candidate = shown.status === 'candidate' ? h` Not approved yet: <a href="${queuePath(shown.slug)}">review it</a>.` : '';
  return h`<p>Status: <strong>${shown.status}</strong>. Collection: <strong>${shown.collection}</strong>. ${a ? h`Version ${a.content_version}, approved by ${a.approved_by ?? 'unknown'} ${when(a.approved_at)}.` : ''}${version}${pending}${candidate}</p>`;
}

interface PageMessage {
  error?: string;
  typed?: { reason?: string; successor?: string };
  move?: MoveTyped;
}

async function recordPage(c: ConsoleContext, deps: ConsoleDeps, slug: string, message: PageMessage = {}, status: 200 | 400 | 404 | 409 = 200): Promise<Response> {
  const versionText = c.req.query('version');
  const version = versionText && /^\d{1,9}$/.test(versionText) ? Number(versionText) : undefined;
  let shown: ShownRecord | undefined;
  let history: RecordHistory;
  try {
    history = (await deps.run({ op: 'records.history', id: slug })) as RecordHistory;
    if (history.status !== 'rejected') shown = (await deps.run({ op: 'records.show', id: slug, ...(version ? { version } : {}) })) as ShownRecord;
  } catch (error) {
    return notFound(c, refusal(error).message);
  }
  const csrf = c.get('frame').csrf;
  const collections = shown ? ((await deps.run({ op: 'collections.list' })) as CollectionInfo[]) : [];
  const body = shown
    ? h`${summaryOf(shown)}
<h2 id="text">Text</h2>${recordText(shown.record)}
<h2 id="sources">Sources</h2>${sourcesTable(shown.record.sources ?? [], shown.source_checks)}
${shown.approval ? h`<h2 id="gates">Gates when approved</h2>${gateTable(shown.approval, `Quality gates of version ${shown.approval.content_version}`)}` : ''}`
    : h`<p>Status: <strong>rejected</strong>. The candidate left the store; what was rejected is below.</p>`;
  return render(
    c,
    {
      title: shown ? shown.record.title : history.slug,
      section: '/console/records',
      notice: noticeOf(c, NOTICES),
      error: message.error,
      body: h`<p><code>${history.slug}</code> · <a href="/console/records">All records</a></p>
${body}
${historyView(history.slug, history)}
${shown ? moveForm(history.slug, csrf, collections, shown.collection, message.move) : ''}
${shown && shown.status !== 'deprecated' ? deprecateForm(history.slug, csrf, message.typed ?? {}) : ''}`,
    },
    status,
  );
}

/** A version reference of the diff page: a number, or `pending`. */
function versionRef(text: string | undefined): number | 'pending' | undefined {
  if (text === 'pending') return 'pending';
  return text && /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}

async function diffPage(c: ConsoleContext, deps: ConsoleDeps, slug: string): Promise<Response> {
  const from = versionRef(c.req.query('from'));
  const to = versionRef(c.req.query('to'));
  let diff: RecordDiff;
  try {
    diff = (await deps.run({ op: 'records.diff', id: slug, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) })) as RecordDiff;
  } catch (error) {
    return notFound(c, refusal(error).message);
  }
  const name = (ref: number | 'pending') => (ref === 'pending' ? 'the revision waiting for review' : `version ${ref}`);
  return render(c, {
    title: `Changes to ${diff.slug}`,
    section: '/console/records',
    body: h`<p>From ${name(diff.from)} to ${name(diff.to)}. Removed words are struck through, added words underlined. <a href="${recordPath(diff.slug)}">Back to the record</a>.</p>
<h2>Changed fields</h2>
${changesView(diff.changes)}`,
  });
}

export function registerRecordPages(app: ConsoleApp, deps: ConsoleDeps): void {
  app.get('/records', (c) => recordsPage(c, deps));
  app.get('/records/:slug', (c) => recordPage(c, deps, c.req.param('slug')));
  app.get('/records/:slug/diff', (c) => diffPage(c, deps, c.req.param('slug')));
  app.post('/records/:slug/deprecate', async (c) => {
    const slug = c.req.param('slug');
    const form = await formOf(c);
    const reason = field(form, 'reason').trim();
    const successor = field(form, 'superseded_by').trim();
    try {
      await deps.run({ op: 'records.deprecate', ids: [slug], ...(reason ? { reason } : {}), ...(successor ? { superseded_by: successor } : {}) });
      return done(c, recordPath(slug), 'deprecated');
    } catch (error) {
      const { message, status: code } = refusal(error);
      return recordPage(c, deps, slug, { error: message, typed: { reason, successor } }, code === 409 ? 409 : 400);
    }
  });
  app.post('/records/:slug/move', async (c) => {
    const slug = c.req.param('slug');
    const move = moveOf(await formOf(c));
    try {
      await deps.run({ op: 'records.move', record: slug, to: move.to, reason: move.reason, ...(move.reviewer ? { reviewer: move.reviewer } : {}) });
      return done(c, recordPath(slug), 'moved');
    } catch (error) {
      const { message, status: code } = refusal(error);
      return recordPage(c, deps, slug, { error: message, move }, code === 404 ? 404 : 400);
    }
  });
}
