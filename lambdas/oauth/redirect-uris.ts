/**
 * Where an authorization code may be sent: OAuth 2.1 asks for exact matching, and a
 * string comparison alone is not exact, because the code is delivered to the URL as a
 * browser parses it. `https://host/cb/*` compared as a prefix admits
 * `https://host/cb/../../elsewhere?x=1`, which the browser (and `new URL`) resolves to
 * `https://host/elsewhere`. So a redirect URI is first parsed, and refused unless its
 * text is already the form it resolves to and nothing in it can be read two ways:
 *
 * - no dot-segments (`/./`, `/../`), encoded dots (`%2e`), backslashes, encoded slashes
 *   or backslashes (`%2f`, `%5c`), fragments, credentials, or control and space
 *   characters; at most `MAX_REDIRECT_URI_LENGTH` characters;
 * - `https`, or `http` on a loopback host (`localhost`, `127.0.0.1`, `[::1]`) on any
 *   port, as RFC 8252 asks for desktop clients (the path still exact);
 * - the text equals what the parser makes of it (so `HTTPS://Host:443/x` and
 *   `https://host/a//b/..` are refused rather than silently rewritten), except that an
 *   empty path may stand for `/`.
 *
 * It is then allowed when it is a loopback redirect, equals an allow-list entry, or
 * falls under a wildcard entry (`https://host/path/*`): the same scheme, host and port,
 * and the entry's path segments followed by at least one more, with no query.
 */

/** Longer than any callback a real client registers, short enough to keep rows small. */
export const MAX_REDIRECT_URI_LENGTH = 512;

/** Host names that can only mean this machine. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Characters and escapes that a browser or a server may read differently from the parser here. */
const AMBIGUOUS = /[\\#\s\u0000-\u001f\u007f]|%2e|%2f|%5c|%00/i;

/** The URL a redirect URI names, or undefined when it is not one that can be matched exactly. */
export function parseRedirectUri(raw: string): URL | undefined {
  if (raw.length === 0 || raw.length > MAX_REDIRECT_URI_LENGTH || AMBIGUOUS.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') return undefined;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return undefined;
  // Dot-segments are resolved by the parser, so they show up as a difference here too.
  if (url.href !== raw && !(url.pathname === '/' && url.search === '' && url.href === `${raw}/`)) return undefined;
  return url;
}

/** Whether `raw` is allowed by a loopback host or by one of the allow-list's entries (see the header). */
export function redirectAllowed(raw: string, allowlist: readonly string[]): boolean {
  const url = parseRedirectUri(raw);
  if (!url) return false;
  if (url.protocol === 'http:') return url.search === '';
  return allowlist.some((entry) => (entry.endsWith('/*') ? underWildcard(url, entry.slice(0, -1)) : entry === raw));
}

/** `base` is the entry without its `*`, ending in `/`: same origin, its segments, then at least one more. */
function underWildcard(url: URL, base: string): boolean {
  let root: URL;
  try {
    root = new URL(base);
  } catch {
    return false;
  }
  if (url.search !== '' || url.origin !== root.origin) return false;
  return url.pathname.startsWith(root.pathname) && url.pathname.length > root.pathname.length;
}

/**
 * Whether a redirect URI named in an authorization request matches one the client
 * registered: the same text, or (RFC 8252 §7.3) a loopback `http` redirect that
 * differs only in its port, since a desktop client picks a free port each time.
 */
export function redirectMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  const [a, b] = [parseRedirectUri(registered), parseRedirectUri(requested)];
  if (!a || !b || a.protocol !== 'http:' || b.protocol !== 'http:') return false;
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search;
}
