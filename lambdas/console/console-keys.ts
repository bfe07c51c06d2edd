/**
 * Keys: create one with its scopes (the key shown once, with a copy button and
 * client set-ups), list them with their scopes, last use and daily quota, change a
 * key's scopes, revoke, change a quota. The same admin commands as `chatctx keys …`.
 */
import type { OwnerCreatedKey, OwnerKeyInfo } from '../admin/key-scopes.ts';
import { h, join, postForm, table, textField, when, type Html } from './console-page.ts';
import { done, field, fields, formOf, refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps, noticeOf } from './console-context.ts';

const NOTICES: Record<string, string> = {
  revoked: 'The key is revoked. Agents using it now get 401.',
  quota: 'The daily quota is changed.',
  scope: "The key's scopes are changed; its OAuth tokens follow. A local server applies it at once, a deployed gateway within its key cache time.",
};

/** The word for the scope that lets a key call submit_feedback (as `chatctx keys scope` takes it). */
const FEEDBACK = 'feedback';

interface Available {
  readonly collections: string[];
}

const scopesText = (key: OwnerKeyInfo) => [...key.collections, ...(key.feedback ? [FEEDBACK] : [])].join(', ');

/** One checkbox with its label; `id` must be unique on the page. */
function checkbox(id: string, name: string, value: string, label: string, checked: boolean): Html {
  return h`<p class="field check"><input type="checkbox" id="${id}" name="${name}" value="${value}"${checked ? h` checked` : ''}>
<label for="${id}">${label}</label></p>`;
}

/** The scopes a key can have, as checkboxes: each collection, then feedback. */
function scopeBoxes(prefix: string, available: Available, has: { collections: readonly string[]; feedback: boolean }, name: string): Html {
  return h`${join(available.collections.map((c) => checkbox(`${prefix}-c-${c}`, name, c, c, has.collections.includes(c))))}
${checkbox(`${prefix}-feedback`, name, FEEDBACK, 'may send feedback', has.feedback)}`;
}

/** A key row's form: tick what the key should have; unticked scopes are removed. */
function scopeForm(key: OwnerKeyInfo, available: Available, csrf: string): Html {
  return postForm(
    `/console/keys/${encodeURIComponent(key.id)}/scope`,
    csrf,
    h`<fieldset class="scopes"><legend>Scopes of ${key.name}</legend>${scopeBoxes(`scope-${key.id}`, available, key, 'scope')}</fieldset>`,
    'Set scopes',
    'inline',
  );
}

/** A quota field: empty or `unlimited` for none, else a whole number. */
function quotaOf(text: string): number | null | undefined {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'unlimited') return null;
  return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

const quotaText = (quota: number | null) => (quota === null ? 'unlimited' : `${quota} per day`);

function keyRow(key: OwnerKeyInfo, available: Available, csrf: string): Html {
  const actions = key.revoked_at
    ? h`<td></td><td>revoked ${when(key.revoked_at)}</td><td></td>`
    : h`<td>${scopeForm(key, available, csrf)}</td>
<td>${postForm(`/console/keys/${encodeURIComponent(key.id)}/quota`, csrf, textField(`quota-${key.id}`, 'daily_quota', `Daily quota for ${key.name}`, { value: key.daily_quota === null ? 'unlimited' : String(key.daily_quota) }), 'Set quota', 'inline')}</td>
<td>${postForm(`/console/keys/${encodeURIComponent(key.id)}/revoke`, csrf, h``, `Revoke ${key.name}`, 'inline danger')}</td>`;
  return h`<tr><th scope="row">${key.name}</th><td><code>${key.id}</code></td><td>${scopesText(key)}</td><td>${quotaText(key.daily_quota)}</td><td>${when(key.created_at)}</td><td>${when(key.last_used_at)}</td>${actions}</tr>`;
}

/** What the create form was sent with, shown again when it is refused. */
interface Typed {
  readonly name?: string;
  readonly collections?: readonly string[];
  readonly feedback?: boolean;
}

function createForm(csrf: string, available: Available, typed: Typed): Html {
  const has = { collections: typed.collections ?? ['public'], feedback: typed.feedback ?? true };
  return postForm(
    '/console/keys',
    csrf,
    h`${textField('key-name', 'name', 'Name (who or what uses the key)', { required: true, value: typed.name })}
${textField('key-quota', 'daily_quota', 'Daily quota', { value: 'unlimited', hint: 'Tool calls per UTC day, or "unlimited".' })}
<fieldset class="scopes"><legend>Scopes</legend>
<p class="hint">The collections the key searches, and whether it may send feedback. Guests see public only.</p>
${scopeBoxes('new-key', available, has, 'scope')}</fieldset>`,
    'Create key',
  );
}

async function keysPage(c: ConsoleContext, deps: ConsoleDeps, message: { notice?: string; error?: string } & Typed = {}, status: 200 | 400 | 404 | 409 = 200) {
  const keys = (await deps.run({ op: 'keys.list' })) as OwnerKeyInfo[];
  const available = (await deps.run({ op: 'keys.scopes_available' })) as Available;
  const csrf = c.get('frame').csrf;
  const create = createForm(csrf, available, message);
  const active = keys.filter((k) => !k.revoked_at).length;
  return render(
    c,
    {
      title: 'Keys',
      section: '/console/keys',
      notice: message.notice,
      error: message.error,
      body: h`<section aria-labelledby="create-key"><h2 id="create-key">Create a key</h2>${create}</section>
<section aria-labelledby="all-keys"><h2 id="all-keys">All keys</h2>
<p>${active} active, ${keys.length - active} revoked.</p>
${table('API keys', ['Name', 'Id', 'Scopes', 'Quota', 'Created', 'Last used', 'Change scopes', 'Quota or state', 'Revoke'], keys.map((k) => keyRow(k, available, csrf)), 'No keys yet. Guests can still search within the guest quota.')}
</section>`,
    },
    status,
  );
}

function newKeyPage(c: ConsoleContext, deps: ConsoleDeps, created: OwnerCreatedKey): Response {
  const url = deps.mcpUrl ?? 'https://YOUR-CHATCTX-HOST/mcp';
  const vscode = JSON.stringify({ servers: { chatctx: { type: 'http', url, headers: { Authorization: `Bearer ${created.key}` } } } }, null, 2);
  const claude = `claude mcp add --transport http chatctx ${url} --header "Authorization: Bearer ${created.key}"`;
  return render(c, {
    title: `Key created: ${created.name}`,
    section: '/console/keys',
    body: h`<p class="warning">This is the only time the key is shown. Copy it now; chatctx keeps only a keyed hash of it.</p>
<p class="field"><label for="new-key">API key</label>
<input id="new-key" class="secret" type="text" readonly value="${created.key}">
<button type="button" class="copy" data-copy="new-key">Copy key</button></p>
<p>Quota: ${quotaText(created.daily_quota)}. Scopes: ${scopesText(created)}. Id: <code>${created.id}</code>.</p>
<h2>Use it from a client</h2>
<h3 id="vscode-label">VS Code (<code>.vscode/mcp.json</code>)</h3>
<pre id="snippet-vscode" tabindex="0" aria-labelledby="vscode-label">${vscode}</pre>
<button type="button" class="copy" data-copy="snippet-vscode">Copy VS Code set-up</button>
<h3 id="claude-label">Claude Code</h3>
<pre id="snippet-claude" tabindex="0" aria-labelledby="claude-label">${claude}</pre>
<button type="button" class="copy" data-copy="snippet-claude">Copy Claude Code command</button>
<p><a href="/console/keys">Back to all keys</a></p>`,
  });
}

export function registerKeyPages(app: ConsoleApp, deps: ConsoleDeps): void {
  app.get('/keys', (c) => keysPage(c, deps, { notice: noticeOf(c, NOTICES) }));
  app.post('/keys', async (c) => {
    const form = await formOf(c);
    const scopes = fields(form, 'scope');
    const typed = { name: field(form, 'name'), collections: scopes.filter((s) => s !== FEEDBACK), feedback: scopes.includes(FEEDBACK) };
    const quota = quotaOf(field(form, 'daily_quota'));
    if (quota === undefined) return keysPage(c, deps, { error: 'The daily quota is a whole number of tool calls, or "unlimited".', ...typed }, 400);
    if (typed.collections.length === 0) return keysPage(c, deps, { error: 'Tick at least one collection for the key to search.', ...typed }, 400);
    try {
      const created = (await deps.run({ op: 'keys.create', name: typed.name, daily_quota: quota, collections: typed.collections, feedback: typed.feedback })) as OwnerCreatedKey;
      c.get('session').reveal = { kind: 'key', value: created };
      return c.redirect('/console/keys/new', 303);
    } catch (error) {
      const { message, status } = refusal(error);
      return keysPage(c, deps, { error: message, ...typed }, status === 409 || status === 404 ? status : 400);
    }
  });
  app.get('/keys/new', (c) => {
    const session = c.get('session');
    const reveal = session.reveal;
    session.reveal = undefined;
    if (reveal?.kind !== 'key') return c.redirect('/console/keys', 303);
    return newKeyPage(c, deps, reveal.value as OwnerCreatedKey);
  });
  app.post('/keys/:id/revoke', async (c) => {
    try {
      await deps.run({ op: 'keys.revoke', id: c.req.param('id') });
      return done(c, '/console/keys', 'revoked');
    } catch (error) {
      const { message, status } = refusal(error);
      return keysPage(c, deps, { error: message }, status === 404 ? 404 : 400);
    }
  });
  app.post('/keys/:id/quota', async (c) => {
    const quota = quotaOf(field(await formOf(c), 'daily_quota'));
    if (quota === undefined) return keysPage(c, deps, { error: 'The daily quota is a whole number of tool calls, or "unlimited".' }, 400);
    try {
      await deps.run({ op: 'keys.set_quota', id: c.req.param('id'), daily_quota: quota });
      return done(c, '/console/keys', 'quota');
    } catch (error) {
      const { message, status } = refusal(error);
      return keysPage(c, deps, { error: message }, status === 404 ? 404 : 400);
    }
  });
  app.post('/keys/:id/scope', async (c) => {
    // Ticked scopes are added, the rest of those the page offered removed: the form says what the key should have.
    const ticked = fields(await formOf(c), 'scope');
    const available = (await deps.run({ op: 'keys.scopes_available' })) as Available;
    const remove = [...available.collections, FEEDBACK].filter((s) => !ticked.includes(s));
    try {
      await deps.run({ op: 'keys.scope', id: c.req.param('id'), add: ticked, remove });
      return done(c, '/console/keys', 'scope');
    } catch (error) {
      const { message, status } = refusal(error);
      return keysPage(c, deps, { error: message }, status === 404 || status === 409 ? status : 400);
    }
  });
}
