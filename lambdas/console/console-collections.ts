/**
 * Collections: the list (records per status, keys scoped to each) and creating
 * one; and, for a record's page, the form that moves it to another collection (a
 * reviewed change: reviewer and reason, like a rejection) and the table of its
 * moves. The same admin commands as `chatctx collections create|list` and
 * `chatctx records move`.
 */
import type { CollectionInfo } from '../records/collections.ts';
import type { MoveEntry } from '../records/record-history.ts';
import { h, join, postForm, table, textField, when, type Html } from './console-page.ts';
import { done, field, formOf, noticeOf, refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps } from './console-context.ts';
import { recordPath } from './console-record-view.ts';

const NOTICES: Record<string, string> = {
  created: 'The collection is created. Import into it with chatctx records import FILE --collection NAME.',
};

/** What an owner typed into the move form, kept when the move is refused. */
export interface MoveTyped {
  readonly to?: string;
  readonly reviewer?: string;
  readonly reason?: string;
}

/** The move form of a record's page: the other collections, who moves it, why. */
export function moveForm(slug: string, csrf: string, collections: readonly CollectionInfo[], current: string, typed: MoveTyped = {}): Html {
  const others = collections.filter((c) => c.name !== current);
  if (others.length === 0) {
    return h`<h2 id="move">Move to another collection</h2>
<p>It is in <strong>${current}</strong>, the only collection. <a href="/console/collections">Create another</a> to move it there.</p>`;
  }
  const options = join(others.map((c) => (c.name === typed.to ? h`<option value="${c.name}" selected>${c.name}</option>` : h`<option value="${c.name}">${c.name}</option>`)));
  return h`<h2 id="move">Move to another collection</h2>
<p>It is in <strong>${current}</strong>. Guests see public; a key sees the collections it is scoped to. The move is kept in the history with who and why.</p>
${postForm(
  `${recordPath(slug)}/move`,
  csrf,
  h`<p class="field"><label for="move-to">Collection</label>
<select id="move-to" name="to">${options}</select></p>
${textField('move-reviewer', 'reviewer', 'Reviewer', { value: typed.reviewer, hint: 'Who decides the move (optional).' })}
<p class="field"><label for="move-reason">Reason</label>
<textarea id="move-reason" name="reason" required minlength="10" aria-describedby="move-reason-hint">${typed.reason ?? ''}</textarea>
<span class="hint" id="move-reason-hint">Why it moves: 10 to 1000 characters.</span></p>`,
  'Move',
)}`;
}

/** The record's moves between collections, oldest first. */
export function movesTable(moves: readonly MoveEntry[]): Html {
  const rows = moves.map((m) => h`<tr><th scope="row">${m.from} → ${m.to}</th><td>${m.reviewer}</td><td>${when(m.moved_at)}</td><td class="text">${m.reason}</td></tr>`);
  return h`<h3>Moves between collections</h3>
${table('Moves between collections', ['From → to', 'Moved by', 'When', 'Reason'], rows, 'Never moved.')}`;
}

/** The move form's fields, for `records.move`. */
export function moveOf(form: Record<string, string | string[]>): { to: string; reviewer: string; reason: string } {
  return { to: field(form, 'to').trim(), reviewer: field(form, 'reviewer').trim(), reason: field(form, 'reason').trim() };
}

function collectionRow(c: CollectionInfo): Html {
  return h`<tr><th scope="row"><a href="/console/records?collection=${encodeURIComponent(c.name)}">${c.name}</a></th><td class="text">${c.description ?? ''}</td>
<td>${c.records.approved}</td><td>${c.records.candidate}</td><td>${c.records.deprecated}</td><td>${c.keys}</td><td>${when(c.created_at)}</td></tr>`;
}

async function collectionsPage(c: ConsoleContext, deps: ConsoleDeps, message: { error?: string; name?: string; description?: string } = {}, status: 200 | 400 | 409 = 200) {
  const collections = (await deps.run({ op: 'collections.list' })) as CollectionInfo[];
  const create = postForm(
    '/console/collections',
    c.get('frame').csrf,
    h`${textField('collection-name', 'name', 'Name', { required: true, value: message.name, hint: '1 to 40 lower-case letters, digits and dashes; "feedback" is reserved.' })}
${textField('collection-description', 'description', 'Description (optional)', { value: message.description, hint: 'What it holds, for owners.' })}`,
    'Create collection',
  );
  return render(
    c,
    {
      title: 'Collections',
      section: '/console/collections',
      notice: noticeOf(c, NOTICES),
      error: message.error,
      body: h`<p>Every record belongs to one collection. Guests see <strong>public</strong>; a key sees the collections it is scoped to. Move a record from its page.</p>
<section aria-labelledby="all-collections"><h2 id="all-collections">All collections</h2>
${table('Collections', ['Name', 'Description', 'Approved', 'Candidates', 'Deprecated', 'Keys', 'Created'], collections.map(collectionRow))}
</section>
<section aria-labelledby="create-collection"><h2 id="create-collection">Create a collection</h2>${create}</section>`,
    },
    status,
  );
}

export function registerCollectionPages(app: ConsoleApp, deps: ConsoleDeps): void {
  app.get('/collections', (c) => collectionsPage(c, deps));
  app.post('/collections', async (c) => {
    const form = await formOf(c);
    const name = field(form, 'name').trim();
    const description = field(form, 'description').trim();
    try {
      await deps.run({ op: 'collections.create', name, ...(description ? { description } : {}) });
      return done(c, '/console/collections', 'created');
    } catch (error) {
      const { message, status } = refusal(error);
      return collectionsPage(c, deps, { error: message, name, description }, status === 409 ? 409 : 400);
    }
  });
}
