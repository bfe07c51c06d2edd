/**
 * A browser stand-in for in-process console tests: sends requests straight to an
 * `OwnerConsole` with a loopback Host, keeps the session cookie, sends the Origin and
 * Sec-Fetch-Site a browser sends for a same-origin form, and reads the CSRF token
 * off the last page. The real-browser tests (test/e2e/console-*.test.ts) drive
 * Chromium instead.
 */
import type { OwnerConsole } from '../../lambdas/console/console-app.ts';

export const CONSOLE_ORIGIN = 'http://127.0.0.1:4999';

export class ConsoleClient {
  cookie = '';
  csrf = '';

  constructor(private readonly console: OwnerConsole) {}

  /** Opens a fresh single-use link; resolves with the redirect's answer. */
  async signIn(): Promise<Response> {
    const link = new URL(this.console.issueLink(CONSOLE_ORIGIN));
    return this.get(link.pathname + link.search);
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await this.console.fetch(new Request(CONSOLE_ORIGIN + path, { headers: { ...this.headers(), ...headers } }));
    return this.remember(response);
  }

  /** The page's text (and its CSRF token remembered). */
  async page(path: string): Promise<{ status: number; text: string }> {
    const response = await this.get(path);
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    return { status: response.status, text };
  }

  /** Posts a form as a same-origin page would; `_csrf` is added unless given. */
  async post(path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Response> {
    const body = new URLSearchParams();
    if (!('_csrf' in fields)) body.append('_csrf', this.csrf);
    for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    const init = {
      method: 'POST',
      body,
      headers: { ...this.headers(), 'Content-Type': 'application/x-www-form-urlencoded', Origin: CONSOLE_ORIGIN, 'Sec-Fetch-Site': 'same-origin', ...headers },
    };
    return this.remember(await this.console.fetch(new Request(CONSOLE_ORIGIN + path, init)));
  }

  private headers(): Record<string, string> {
    return this.cookie ? { Cookie: this.cookie } : {};
  }

  private remember(response: Response): Response {
    const set = response.headers.get('set-cookie');
    const value = set ? /chatctx_console=([^;]*)/.exec(set)?.[1] : undefined;
    if (value !== undefined) this.cookie = value ? `chatctx_console=${value}` : '';
    return response;
  }
}
