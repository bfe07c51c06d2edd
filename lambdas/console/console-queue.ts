/**
 * The review queue: every candidate and pending revision with its gate verdicts
 * (`records.queue`), and one item's page: the gate report with what to do, a word
 * diff against the approved version (or the candidate's text), its sources, and
 * the two decisions, approve (with an override and its reason for each failing
 * gate) or reject (with a reason). The same admin commands as `chatctx records
 * queue|approve|reject`.
 */
import type { QueueItem } from '../records/review-queue.ts';
import { AppError } from '../errors/app-error.ts';
import { h, join, postForm, table, textField, when, type Html } from './console-page.ts';
import { done, field, fields, formOf, refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps, noticeOf } from './console-context.ts';
import {
  applyChanges,
  changesView,
  checksFor,
  gateTable,
  queuePath,
  recordPath,
  recordText,
  sourcesTable,
  type RecordDiff,
  type ShownRecord,
} from './console-record-view.ts';

const NOTICES: Record<string, string> = {
  approved: 'Approved.',
  rejected: 'Rejected.',
};

/** "2 gates fail, 1 warns", in words (the verdict is never told by colour alone). */
export function gateSummary(item: Pick<QueueItem, 'gates'>): Html {
  if (!item.gates) return h`<span class="verdict-warn">not judged (stored before review kept its file)</span>`;
  const fails = item.gates.gates.filter((g) => g.verdict === 'fail').length;
  const warns = item.gates.gates.filter((g) => g.verdict === 'warn').length;
  if (fails === 0 && warns === 0) return h`<span class="verdict-pass">all gates pass</span>`;
  const parts: string[] = [];
  if (fails > 0) parts.push(`${fails} ${fails === 1 ? 'gate fails' : 'gates fail'}`);
  if (warns > 0) parts.push(`${warns} ${warns === 1 ? 'gate warns' : 'gates warn'}`);
  return h`<span class="verdict-${fails > 0 ? 'fail' : 'warn'}">${parts.join(', ')}</span>`;
}

const KIND_TEXT = { candidate: 'new candidate', revision: 'revision of an approved record' } as const;

async function queuePage(c: ConsoleContext, deps: ConsoleDeps): Promise<Response> {
  const queue = (await deps.run({ op: 'records.queue' })) as QueueItem[];
  const rows = queue.map(
    (item) =>
      h`<tr><th scope="row"><a href="${queuePath(item.slug)}">${item.slug}</a></th><td class="text">${item.title}</td><td>${KIND_TEXT[item.kind]}</td><td>${when(item.staged_at)}</td><td>${gateSummary(item)}</td></tr>`,
  );
  return render(c, {
    title: 'Review queue',
    section: '/console/queue',
    notice: noticeOf(c, NOTICES),
    body: h`<p>${queue.length === 1 ? '1 record waits' : `${queue.length} records wait`} for review. A revision's approved version keeps serving until the revision is approved.</p>
${table('Records waiting for review', ['Record', 'Title', 'Kind', 'Since', 'Gates'], rows, 'Nothing waits for review. Records imported without --approve, and changed texts of approved records, appear here.')}`,
  });
}

/** What was typed into the item's forms, kept when a decision is refused. */
interface Typed {
  reviewer?: string;
  overrides?: readonly string[];
  reasons?: Record<string, string>;
  rejectReason?: string;
}

function approveForm(item: QueueItem, csrf: string, typed: Typed): Html {
  const failing = item.gates?.gates.filter((g) => g.verdict === 'fail') ?? [];
  const overrides = join(
    failing.map((gate) => {
      const checked = typed.overrides?.includes(gate.code);
      return h`<fieldset class="override"><legend>The ${gate.code} gate fails</legend>
<p class="field check"><input type="checkbox" id="override-${gate.code}" name="override" value="${gate.code}"${checked ? h` checked` : ''}>
<label for="override-${gate.code}">Override ${gate.code}</label></p>
<p class="field"><label for="reason-${gate.code}">Reason for overriding ${gate.code}</label>
<textarea id="reason-${gate.code}" name="reason_${gate.code}" aria-describedby="reason-${gate.code}-hint">${typed.reasons?.[gate.code] ?? ''}</textarea>
<span class="hint" id="reason-${gate.code}-hint">At least 10 characters; kept with the approval.</span></p></fieldset>`;
    }),
  );
  const intro = failing.length
    ? h`<p>${failing.length === 1 ? 'One gate fails' : `${failing.length} gates fail`}: approving publishes only over an override with its reason.</p>`
    : h`<p>No gate fails; approving publishes this text.</p>`;
  return postForm(
    `${queuePath(item.slug)}/approve`,
    csrf,
    h`${intro}${textField('approve-reviewer', 'reviewer', 'Reviewer', { value: typed.reviewer, required: true, hint: 'Your name, kept with the approved version.' })}${overrides}`,
    'Approve',
  );
}

function rejectForm(item: QueueItem, csrf: string, typed: Typed): Html {
  const effect = item.kind === 'candidate' ? 'The candidate leaves the store; its text is kept in its history.' : 'The approved version keeps serving; the revision is kept in the history.';
  return postForm(
    `${queuePath(item.slug)}/reject`,
    csrf,
    h`<p>${effect}</p>${textField('reject-reviewer', 'reviewer', 'Reviewer', { value: typed.reviewer })}
<p class="field"><label for="reject-reason">Reason for rejecting</label>
<textarea id="reject-reason" name="reason" required minlength="10" aria-describedby="reject-reason-hint">${typed.rejectReason ?? ''}</textarea>
<span class="hint" id="reject-reason-hint">At least 10 characters.</span></p>`,
    'Reject',
    'danger',
  );
}

/** The text under review, against the approved version for a revision. */
async function textUnderReview(deps: ConsoleDeps, item: QueueItem, shown: ShownRecord): Promise<{ text: Html; sources: Html }> {
  if (item.kind === 'candidate') {
    return {
      text: h`<h2 id="text">The candidate's text</h2><p>A new record: there is no approved version to compare with.</p>${recordText(shown.record)}`,
      sources: sourcesTable(shown.record.sources ?? [], shown.source_checks),
    };
  }
  const diff = (await deps.run({ op: 'records.diff', id: item.slug, from: shown.content_version, to: 'pending' })) as RecordDiff;
  const pending = applyChanges(shown.record, diff.changes);
  return {
    text: h`<h2 id="text">Changes against the approved version ${shown.content_version}</h2>
<p>Removed words are struck through, added words underlined. <a href="${recordPath(item.slug)}">The approved version and its history</a>.</p>
${changesView(diff.changes)}`,
    sources: sourcesTable(pending.sources ?? [], checksFor(pending.sources ?? [], shown)),
  };
}

async function itemPage(c: ConsoleContext, deps: ConsoleDeps, slug: string, message: { error?: string; typed?: Typed } = {}, status: 200 | 400 | 404 | 409 = 200): Promise<Response> {
  const queue = (await deps.run({ op: 'records.queue' })) as QueueItem[];
  const item = queue.find((q) => q.slug === slug);
  if (!item) {
    return render(
      c,
      { title: 'Not waiting for review', section: '/console/queue', error: message.error, body: h`<p>No record with the slug <code>${slug}</code> waits for review. <a href="/console/queue">Back to the review queue</a> or <a href="${recordPath(slug)}">see the record</a>.</p>` },
      404,
    );
  }
  const shown = (await deps.run({ op: 'records.show', id: slug })) as ShownRecord;
  const { text, sources } = await textUnderReview(deps, item, shown);
  const csrf = c.get('frame').csrf;
  const typed = message.typed ?? {};
  return render(
    c,
    {
      title: `Review ${item.slug}`,
      section: '/console/queue',
      error: message.error,
      body: h`<p>${item.title}: ${item.kind === 'candidate' ? 'a new candidate' : 'a revision of an approved record'}, waiting since ${when(item.staged_at)}. <a href="/console/queue">Back to the review queue</a>.</p>
<h2 id="gates">Quality gates</h2>
${item.gates ? gateTable(item.gates, `Quality gates of ${item.slug}`) : h`<p class="warning">This record was stored before review kept its file: re-import its file to judge it.</p>`}
${text}
<h2 id="sources">Sources</h2>
${sources}
<h2 id="approve">Approve</h2>
${approveForm(item, csrf, typed)}
<h2 id="reject">Reject</h2>
${rejectForm(item, csrf, typed)}`,
    },
    status,
  );
}

/** An admin refusal in words, with each gate problem an approval names. */
function refusalText(error: unknown): { message: string; status: 400 | 404 | 409 } {
  const { message, status } = refusal(error);
  const problems = error instanceof AppError ? (error.details as { problems?: { where: string; problem: string }[] }).problems : undefined;
  const listed = problems?.length ? ` ${problems.map((p) => `${p.where}: ${p.problem}`).join(' ')}` : '';
  return { message: message + listed, status: status === 404 || status === 409 ? status : 400 };
}

export function registerQueuePages(app: ConsoleApp, deps: ConsoleDeps): void {
  app.get('/queue', (c) => queuePage(c, deps));
  app.get('/queue/:slug', (c) => itemPage(c, deps, c.req.param('slug')));
  app.post('/queue/:slug/approve', async (c) => {
    const slug = c.req.param('slug');
    const form = await formOf(c);
    const reviewer = field(form, 'reviewer').trim();
    const chosen = fields(form, 'override');
    const reasons = Object.fromEntries(Object.keys(form).flatMap((name) => (name.startsWith('reason_') ? [[name.slice('reason_'.length), field(form, name)]] : [])));
    const typed: Typed = { reviewer, overrides: chosen, reasons };
    try {
      await deps.run({ op: 'records.approve', ids: [slug], ...(reviewer ? { reviewer } : {}), overrides: chosen.map((gate) => ({ gate: gate as never, reason: reasons[gate] ?? '' })) });
      return done(c, '/console/queue', 'approved');
    } catch (error) {
      const { message, status } = refusalText(error);
      return itemPage(c, deps, slug, { error: message, typed }, status);
    }
  });
  app.post('/queue/:slug/reject', async (c) => {
    const slug = c.req.param('slug');
    const form = await formOf(c);
    const reviewer = field(form, 'reviewer').trim();
    const reason = field(form, 'reason');
    try {
      await deps.run({ op: 'records.reject', ids: [slug], ...(reviewer ? { reviewer } : {}), reason });
      return done(c, '/console/queue', 'rejected');
    } catch (error) {
      const { message, status } = refusalText(error);
      return itemPage(c, deps, slug, { error: message, typed: { reviewer, rejectReason: reason } }, status);
    }
  });
}
