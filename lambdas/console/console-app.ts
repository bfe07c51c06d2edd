/**
 * The owner console: web pages over the same admin operations the CLI sends
 * (`admin/admin-operations.ts`), so an approval, a key or a report is one code path
 * whether it starts in a browser or a terminal. The console never touches the store
 * itself; it is given a runner that sends one admin command and returns its result
 * (in process for a local server, the admin Lambda for `--remote`).
 *
 * Served under `/console` on loopback only, by whoever holds the store (the local
 * server's admin listener, or `chatctx console` itself), or on the owner's machine
 * for a deployed stack. Every answer carries a strict Content-Security-Policy (no
 * inline script or style), refuses framing and caching, and sends no referrer.
 * Requests must name a loopback host (a page on another name that resolves to
 * 127.0.0.1 gets nothing). Apart from the stylesheet, the script and the sign-in
 * link, every page needs a session (`console-sessions.ts`); every POST needs the
 * session's CSRF token in the form, and the browser's Origin or Sec-Fetch-Site must
 * say the form came from the console itself.
 */
import { readFileSync } from 'node:fs';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie, deleteCookie } from 'hono/cookie';
import { csrf } from 'hono/csrf';
import { secureHeaders } from 'hono/secure-headers';
import { HTTPException } from 'hono/http-exception';
import { errorKind } from '../observability/logger.ts';
import { AppError } from '../errors/app-error.ts';
import { ConsoleSessions } from './console-sessions.ts';
import { barePage, h } from './console-page.ts';
import { formOf, type ConsoleApp, type ConsoleDeps, type ConsoleEnv } from './console-context.ts';
import { registerKeyPages } from './console-keys.ts';
import { registerQueuePages } from './console-queue.ts';
import { registerRecordPages } from './console-records.ts';
import { registerFeedbackPages } from './console-feedback.ts';
import { registerAnalyticsPages } from './console-analytics.ts';
import { registerCollectionPages } from './console-collections.ts';

export interface OwnerConsole {
  /** Answers a request whose path starts with `/console`. */
  fetch(request: Request): Promise<Response>;
  /** A single-use sign-in link for a console served at `origin`. */
  issueLink(origin: string): string;
}

export const SESSION_COOKIE = 'chatctx_console';
/** Forms are small; an import goes through the CLI. */
const FORM_LIMIT_BYTES = 64 * 1024;
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

const ASSETS: Record<string, { type: string; body: string }> = {
  'console.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('./assets/console.css', import.meta.url), 'utf8') },
  'console.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('./assets/console.js', import.meta.url), 'utf8') },
};

const SIGN_IN_AGAIN = h`<p>This console link has expired, was already used, or you signed out.</p>
<p>Run <code>chatctx console</code> again (add <code>--remote FUNCTION</code> for a deployed stack) and open the new link it prints.</p>`;

export function createConsole(deps: ConsoleDeps): OwnerConsole {
  const sessions = new ConsoleSessions(deps.now);
  const app: ConsoleApp = new Hono<ConsoleEnv>().basePath('/console');
  app.use(secureHeaders(SECURITY_HEADERS), noStore);
  app.use(async (c, next) => {
    // The Node adapter builds the URL from the Host header, so this is the name the browser asked for.
    if (!LOOPBACK_NAMES.has(new URL(c.req.url).hostname)) return c.text('The console answers on loopback names only.', 403);
    await next();
  });
  app.get('/assets/:name', (c) => {
    const asset = ASSETS[c.req.param('name')];
    return asset ? c.body(asset.body, 200, { 'Content-Type': asset.type }) : c.notFound();
  });
  app.get('/login', (c) => {
    const id = sessions.redeem(c.req.query('token') ?? '');
    if (!id) return c.html(barePage('Sign in again', SIGN_IN_AGAIN), 401);
    setCookie(c, SESSION_COOKIE, id, { path: '/console', httpOnly: true, sameSite: 'Strict' });
    return c.redirect('/console/queue', 303);
  });
  app.use(async (c, next) => {
    const session = sessions.session(getCookie(c, SESSION_COOKIE));
    if (!session) return c.html(barePage('Sign in again', SIGN_IN_AGAIN), 401);
    c.set('session', session);
    c.set('frame', { target: deps.target, csrf: session.csrf });
    await next();
  });
  app.on('POST', '*', bodyLimit({ maxSize: FORM_LIMIT_BYTES }), csrf(), async (c, next) => {
    const form = await formOf(c);
    if (!sessions.csrfMatches(c.get('session'), form._csrf)) return c.html(barePage('Form expired', FORM_EXPIRED), 403);
    await next();
  });
  app.post('/logout', (c) => {
    sessions.end(getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: '/console' });
    return c.html(barePage('Signed out', SIGN_IN_AGAIN));
  });
  app.get('/', (c) => c.redirect('/console/queue', 303));
  registerQueuePages(app, deps);
  registerRecordPages(app, deps);
  registerCollectionPages(app, deps);
  registerKeyPages(app, deps);
  registerFeedbackPages(app, deps);
  registerAnalyticsPages(app, deps);
  app.notFound((c) => c.html(barePage('Not found', h`<p>The console has no such page. <a href="/console/queue">Go to the review queue</a>.</p>`), 404));
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      const status = error.status === 413 ? 413 : 403;
      return c.html(barePage(status === 413 ? 'Form too large' : 'Form refused', status === 413 ? h`<p>That form was too large.</p>` : FORM_EXPIRED), status);
    }
    deps.logger.error('console_failed', { error: errorKind(error) });
    // An AppError's message is written for the owner (an admin function that cannot be invoked: check the
    // credentials); an internal failure inside the operations reaches the console with the generic text only.
    const said = error instanceof AppError ? h`<p>${error.message}</p>` : h``;
    return c.html(barePage('Something failed', h`${said}<p>The console could not answer. The log of the process serving it says why.</p>`), 500);
  });
  return {
    fetch: async (request) => app.fetch(request),
    issueLink: (origin) => `${origin}/console/login?token=${sessions.issueLink()}`,
  };
}

const FORM_EXPIRED = h`<p>The form was refused: it did not come from this console's own page, or its session ended.</p>
<p><a href="/console/queue">Reload the console</a> and try again.</p>`;

const SECURITY_HEADERS: Parameters<typeof secureHeaders>[0] = {
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    connectSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
  xFrameOptions: 'DENY',
  // Served over plain HTTP on loopback: a transport-security header would mean nothing.
  strictTransportSecurity: false,
  referrerPolicy: 'no-referrer',
  crossOriginResourcePolicy: 'same-origin',
  crossOriginOpenerPolicy: 'same-origin',
};

async function noStore(c: Context, next: () => Promise<void>): Promise<void> {
  await next();
  c.header('Cache-Control', 'no-store');
}

export type { ConsoleDeps };
