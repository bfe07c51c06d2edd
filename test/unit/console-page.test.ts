/**
 * The console's page kit: whatever a record, key name or comment contains is shown
 * as text, never run as markup; forms carry the CSRF token; the layout marks the
 * current section for assistive technology.
 */
import { describe, expect, it } from 'vitest';
import { h as template, layout as renderLayout, postForm as renderForm, table as renderTable, textField as renderField, when as renderWhen } from '../../lambdas/console/console-page.ts';

// The kit returns escaped-string objects; a page is their text.
const h = template;
const layout = (...args: Parameters<typeof renderLayout>) => String(renderLayout(...args));
const postForm = (...args: Parameters<typeof renderForm>) => String(renderForm(...args));
const table = (...args: Parameters<typeof renderTable>) => String(renderTable(...args));
const textField = (...args: Parameters<typeof renderField>) => String(renderField(...args));
const when = (...args: Parameters<typeof renderWhen>) => String(renderWhen(...args));

const HOSTILE = `<script>alert(1)</script><img src=x onerror="alert(2)">`;

describe('the console page kit', () => {
  it('escapes every interpolated value, attributes included', () => {
    const page = layout({ target: HOSTILE, csrf: '"><script>' }, { title: HOSTILE, section: '/console/keys', body: h`<p>${HOSTILE}</p>`, error: HOSTILE });
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('value="&quot;&gt;&lt;script&gt;"');
    expect(textField('f', 'name', 'Name', { value: '" autofocus onfocus="x' })).toContain('value="&quot; autofocus onfocus=&quot;x"');
  });

  it('marks the current section and announces notices and errors', () => {
    const page = layout({ target: 't', csrf: 'c' }, { title: 'Keys', section: '/console/keys', body: h``, notice: 'Done.', error: 'Refused.' });
    expect(page).toContain('<a href="/console/keys" aria-current="page">Keys</a>');
    expect(page).not.toContain('<a href="/console/queue" aria-current="page">');
    expect(page).toContain('<p class="notice" role="status">Done.</p>');
    expect(page).toContain('<p class="error" role="alert">Refused.</p>');
    expect(page).toContain('<html lang="en">');
  });

  it('puts the CSRF token in every form', () => {
    const form = postForm('/console/keys', 'token-1', h``, 'Create');
    expect(form).toContain('method="post"');
    expect(form).toContain('<input type="hidden" name="_csrf" value="token-1">');
  });

  it('says so when a table is empty, and gives a filled one a caption and header cells', () => {
    expect(table('Keys', ['Name'], [], 'No keys yet.')).toBe('<p class="empty">No keys yet.</p>');
    const filled = table('Keys', ['Name'], [h`<tr><td>a</td></tr>`]);
    expect(filled).toContain('<caption>Keys</caption>');
    expect(filled).toContain('<th scope="col">Name</th>');
  });

  it('shows times in UTC to the minute, and a missing one in words', () => {
    expect(when('2026-12-01T10:04:59.123Z')).toBe('<time datetime="2026-12-01T10:04:59.123Z">2026-12-01 10:04 UTC</time>');
    expect(when(null)).toBe('never');
  });
});
