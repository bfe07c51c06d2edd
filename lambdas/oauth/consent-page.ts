/**
 * The consent page of `/oauth/authorize`: a minimal HTML form where a person pastes
 * a chatctx API key to let a connector act as that key. The key travels in the
 * form's POST body only; nothing here stores or logs it.
 *
 * Cross-site request forgery: the GET sets a random value in a `SameSite=Strict`,
 * `HttpOnly` cookie and puts an HMAC of that value (with an expiry) in the form.
 * A POST counts only when both arrive and match, which a page on another site
 * cannot arrange: it can neither read the form nor make the browser send the cookie.
 * The page may not be framed (clickjacking).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { derivedKeyMac } from '../privacy/hashing.ts';

export const CSRF_COOKIE = 'chatctx_oauth_csrf';
const CSRF_SECONDS = 600;

/** The authorization request's parameters the form carries back unchanged. */
export const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'state', 'resource', 'scope'] as const;

export interface ConsentView {
  readonly clientName: string;
  readonly redirectHost: string;
  readonly params: Readonly<Record<string, string>>;
  readonly error?: string;
}

/** A fresh CSRF pair: the cookie value and the form token bound to it. */
export function newCsrf(pepper: Buffer, nowMs: number): { cookie: string; token: string } {
  const cookie = randomBytes(24).toString('base64url');
  const expires = Math.floor(nowMs / 1000) + CSRF_SECONDS;
  return { cookie, token: `${expires}.${csrfMac(pepper, cookie, expires)}` };
}

export function csrfValid(pepper: Buffer, cookieHeader: string | null, token: string | undefined, nowMs: number): boolean {
  const cookie = readCookie(cookieHeader, CSRF_COOKIE);
  const [expiresText, mac] = (token ?? '').split('.');
  const expires = Number(expiresText);
  if (!cookie || !mac || !Number.isSafeInteger(expires) || expires * 1000 <= nowMs) return false;
  const expected = Buffer.from(csrfMac(pepper, cookie, expires));
  const given = Buffer.from(mac);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function csrfCookieHeader(value: string, secure: boolean): string {
  return `${CSRF_COOKIE}=${value}; Max-Age=${CSRF_SECONDS}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

function csrfMac(pepper: Buffer, cookie: string, expires: number): string {
  return derivedKeyMac(pepper, 'oauth-consent-csrf', `${cookie}.${expires}`);
}

function readCookie(header: string | null, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** Headers every OAuth HTML page carries: not cached, not framed, no scripts. */
export const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
} as const;

export function consentPage(view: ConsentView, csrfToken: string): string {
  const hidden = Object.entries(view.params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n      ');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Connect to chatctx</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}input[type=password]{width:100%;padding:.4rem}.error{color:#a00}</style></head>
<body>
  <h1>Connect ${escapeHtml(view.clientName)} to chatctx</h1>
  <p>${escapeHtml(view.clientName)} asks to call chatctx's tools with your API key's quota and scopes: it sees the collections the key sees, and sends feedback only if the key may. It will be sent back to <strong>${escapeHtml(view.redirectHost)}</strong>. It never sees the key itself; a change to the key's scopes applies to it too, and revoking the key ends its access.</p>
  ${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
  <form method="post">
      ${hidden}
      <input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
      <label for="api_key">chatctx API key</label>
      <input id="api_key" name="api_key" type="password" autocomplete="off" required placeholder="kb_live_...">
      <p><button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny" formnovalidate>Deny</button></p>
  </form>
</body>
</html>
`;
}

/** A plain page for an authorization request that cannot be sent back to any client. */
export function errorPage(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chatctx authorization</title></head>
<body><h1>This authorization request cannot be completed</h1><p>${escapeHtml(message)}</p></body></html>
`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
