/**
 * The owner console's page kit: the layout every page shares and the few building
 * blocks pages repeat (forms that carry the CSRF token, tables, notices).
 *
 * Everything is rendered on the server with `hono/html`, which escapes every
 * interpolated value; only values built by these helpers (already escaped) are
 * inserted whole. No page needs script to work: `assets/console.js` adds a copy
 * button and confirmations where a browser runs it, and the Content-Security-Policy
 * allows no inline script or style at all.
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** Escaped HTML. Pages never interpolate promises, so rendering stays synchronous. */
export type Html = HtmlEscapedString;

export function h(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return html(strings, ...values) as Html;
}

/** Joins rendered fragments (a list of rows, say). */
export const join = (parts: readonly Html[]): Html => raw(parts.join(''));

export const NAV = [
  { path: '/console/queue', label: 'Review queue' },
  { path: '/console/records', label: 'Records' },
  { path: '/console/collections', label: 'Collections' },
  { path: '/console/keys', label: 'Keys' },
  { path: '/console/feedback', label: 'Feedback' },
  { path: '/console/analytics', label: 'Analytics' },
] as const;

export interface PageFrame {
  /** Shown in the header: which store or stack this console works on. */
  readonly target: string;
  readonly csrf: string;
}

export interface PageContent {
  readonly title: string;
  /** The navigation entry to mark as current. */
  readonly section?: (typeof NAV)[number]['path'];
  readonly body: Html;
  /** A confirmation of what just happened (announced politely). */
  readonly notice?: string;
  /** What went wrong with the last action (announced at once). */
  readonly error?: string;
}

/** The document's start, shared by every page; a page without forms to enhance loads no script. */
function head(title: string, script: boolean): Html {
  return h`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · chatctx console</title>
<link rel="stylesheet" href="/console/assets/console.css">
${script ? h`<script src="/console/assets/console.js" defer></script>` : ''}
</head>`;
}

export function layout(frame: PageFrame, page: PageContent): Html {
  const nav = join(
    NAV.map((item) =>
      item.path === page.section ? h`<li><a href="${item.path}" aria-current="page">${item.label}</a></li>` : h`<li><a href="${item.path}">${item.label}</a></li>`,
    ),
  );
  return h`${head(page.title, true)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <p class="brand">chatctx console <span class="target">${frame.target}</span></p>
  <nav aria-label="Console"><ul>${nav}</ul></nav>
  ${postForm('/console/logout', frame.csrf, h``, 'Sign out', 'signout')}
</header>
<main id="main" tabindex="-1">
<h1>${page.title}</h1>
${page.notice ? h`<p class="notice" role="status">${page.notice}</p>` : ''}
${page.error ? h`<p class="error" role="alert">${page.error}</p>` : ''}
${page.body}
</main>
</body>
</html>`;
}

/** A page outside a session (link expired, signed out): no navigation, no forms. */
export function barePage(title: string, message: Html): Html {
  return h`${head(title, false)}
<body>
<main id="main" class="bare">
<h1>${title}</h1>
${message}
</main>
</body>
</html>`;
}

/** A POST form with the session's CSRF token; `fields` are its visible inputs. */
export function postForm(action: string, csrf: string, fields: Html, button: string, className = ''): Html {
  return h`<form method="post" action="${action}"${className ? h` class="${className}"` : ''}>
<input type="hidden" name="_csrf" value="${csrf}">
${fields}<button type="submit">${button}</button>
</form>`;
}

/** A labelled text input; `id` ties the label to it. */
export function textField(id: string, name: string, label: string, options: { value?: string; required?: boolean; hint?: string; type?: string; minlength?: number } = {}): Html {
  const hintId = options.hint ? `${id}-hint` : '';
  return h`<p class="field"><label for="${id}">${label}</label>
<input id="${id}" name="${name}" type="${options.type ?? 'text'}" value="${options.value ?? ''}"${options.required ? raw(' required') : ''}${
    options.minlength ? h` minlength="${options.minlength}"` : ''
  }${hintId ? h` aria-describedby="${hintId}"` : ''}>
${options.hint ? h`<span class="hint" id="${hintId}">${options.hint}</span>` : ''}</p>`;
}

/** A table with a caption and header cells; rows are rendered by the caller. */
/**
 * A data table in its own scrolling region. `long`: a list of up to thousands of rows, laid out
 * from its header (fixed layout), so its columns do not widen while a slow machine renders the
 * rows in several passes (each widening is a layout shift).
 */
export function table(caption: string, headers: readonly string[], rows: readonly Html[], empty = 'Nothing here.', long = false): Html {
  if (rows.length === 0) return h`<p class="empty">${empty}</p>`;
  return h`<div class="scroll" tabindex="0" role="region" aria-label="${caption}"><table${long ? h` class="long"` : ''}>
<caption>${caption}</caption>
<thead><tr>${join(headers.map((header) => h`<th scope="col">${header}</th>`))}</tr></thead>
<tbody>${join(rows)}</tbody>
</table></div>`;
}

/** A date-time for people: the ISO text trimmed to minutes, UTC, in a `<time>`. */
export function when(iso: string | null | undefined, never = 'never'): Html {
  if (!iso) return h`${never}`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h`${iso}`;
  return h`<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}
