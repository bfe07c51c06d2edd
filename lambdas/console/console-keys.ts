/**
 * Keys: create one (the key shown once, with a copy button and client set-ups),
 * list them with last use and daily quota, revoke, change a quota. The same admin
 * commands as `chatctx keys …`.
 */
import type { ApiKeyInfo, CreatedApiKey } from '../auth/key-repository.ts';
import { h, postForm, table, textField, when, type Html } from './console-page.ts';
import { done, field, formOf, refusal, render, type ConsoleApp, type ConsoleContext, type ConsoleDeps, noticeOf } from './console-context.ts';

const NOTICES: Record<string, string> = {
  revoked: 'The key is revoked. Agents using it now get 401.',
  quota: 'The daily quota is changed.',
};

/** A quota field: empty or `unlimited` for none, else a whole number. */
function quotaOf(text: string): number | null | undefined {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'unlimited') return null;
  return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

const quotaText = (quota: number | null) => (quota === null ? 'unlimited' : `${quota} per day`);

function keyRow(key: ApiKeyInfo, csrf: string): Html {
  const actions = key.revoked_at
    ? h`<td>revoked ${when(key.revoked_at)}</td><td></td>`
    : h`<td>${postForm(`/console/keys/${encodeURIComponent(key.id)}/quota`, csrf, textField(`quota-${key.id}`, 'daily_quota', `Daily quota for ${key.name}`, { value: key.daily_quota === null ? 'unlimited' : String(key.daily_quota) }), 'Set quota', 'inline')}</td>
<td>${postForm(`/console/keys/${encodeURIComponent(key.id)}/revoke`, csrf, h``, `Revoke ${key.name}`, 'inline danger')}</td>`;
  return h`<tr><th scope="row">${key.name}</th><td><code>${key.id}</code></td><td>${quotaText(key.daily_quota)}</td><td>${when(key.created_at)}</td><td>${when(key.last_used_at)}</td>${actions}</tr>`;
}

async function keysPage(c: ConsoleContext, deps: ConsoleDeps, message: { notice?: string; error?: string; name?: string } = {}, status: 200 | 400 | 404 | 409 = 200) {
  const keys = (await deps.run({ op: 'keys.list' })) as ApiKeyInfo[];
  const csrf = c.get('frame').csrf;
  const create = postForm(
    '/console/keys',
    csrf,
    h`${textField('key-name', 'name', 'Name (who or what uses the key)', { required: true, value: message.name })}
${textField('key-quota', 'daily_quota', 'Daily quota', { value: 'unlimited', hint: 'Tool calls per UTC day, or "unlimited".' })}`,
    'Create key',
  );
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
${table('API keys', ['Name', 'Id', 'Quota', 'Created', 'Last used', 'Quota or state', 'Revoke'], keys.map((k) => keyRow(k, csrf)), 'No keys yet. Guests can still search within the guest quota.')}
</section>`,
    },
    status,
  );
}

function newKeyPage(c: ConsoleContext, deps: ConsoleDeps, created: CreatedApiKey): Response {
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
<p>Quota: ${quotaText(created.daily_quota)}. Id: <code>${created.id}</code>.</p>
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
    const name = field(form, 'name');
    const quota = quotaOf(field(form, 'daily_quota'));
    if (quota === undefined) return keysPage(c, deps, { error: 'The daily quota is a whole number of tool calls, or "unlimited".', name }, 400);
    try {
      const created = (await deps.run({ op: 'keys.create', name, daily_quota: quota })) as CreatedApiKey;
      c.get('session').reveal = { kind: 'key', value: created };
      return c.redirect('/console/keys/new', 303);
    } catch (error) {
      const { message, status } = refusal(error);
      return keysPage(c, deps, { error: message, name }, status === 409 || status === 404 ? status : 400);
    }
  });
  app.get('/keys/new', (c) => {
    const session = c.get('session');
    const reveal = session.reveal;
    session.reveal = undefined;
    if (reveal?.kind !== 'key') return c.redirect('/console/keys', 303);
    return newKeyPage(c, deps, reveal.value as CreatedApiKey);
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
}

