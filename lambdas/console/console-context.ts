/**
 * What every console page works with: the runner that sends admin commands, the
 * request's session and frame, rendering in the shared layout, reading a form, and
 * turning an admin error into a message on the page instead of a failure.
 */
import type { Context, Hono } from 'hono';
import type { AdminCommand } from '../admin/admin-operations.ts';
import type { Logger } from '../ports/logger.ts';
import { AppError } from '../errors/app-error.ts';
import { ADMIN_HTTP_STATUS } from '../admin/admin-envelope.ts';
import type { ConsoleSession } from './console-sessions.ts';
import { layout, type PageContent, type PageFrame } from './console-page.ts';

/** Sends one admin command and returns its result, or throws its `AppError`. */
export type AdminRunner = (command: AdminCommand) => Promise<unknown>;

export interface ConsoleDeps {
  readonly run: AdminRunner;
  /** Shown in every page's header: the data directory or the stack's function. */
  readonly target: string;
  /** The MCP endpoint agents use, for the client snippets shown with a new key. */
  readonly mcpUrl?: string;
  readonly logger: Logger;
  /** @default Date.now */
  readonly now?: () => number;
}

export type ConsoleEnv = { Variables: { session: ConsoleSession; frame: PageFrame } };
export type ConsoleApp = Hono<ConsoleEnv>;
export type ConsoleContext = Context<ConsoleEnv>;

type PageStatus = 200 | 400 | 401 | 404 | 409 | 500 | 503;


/** Renders a page in the shared layout for the signed-in owner. */
export function render(c: ConsoleContext, page: PageContent, status: PageStatus = 200): Response {
  return c.html(layout(c.get('frame'), page), status);
}

/** The form's fields (a repeated name becomes a list). */
export async function formOf(c: ConsoleContext): Promise<Record<string, string | string[]>> {
  const body = await c.req.parseBody({ all: true });
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') out[name] = value;
    else if (Array.isArray(value)) out[name] = value.filter((v): v is string => typeof v === 'string');
  }
  return out;
}

/** One form field as text ('' when missing; the first when repeated). */
export function field(form: Record<string, string | string[]>, name: string): string {
  const value = form[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** A form field that may repeat (checkboxes), as a list. */
export function fields(form: Record<string, string | string[]>, name: string): string[] {
  const value = form[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * What an admin command's refusal tells the owner: its message, and the first
 * detail of a validation error. An internal failure is not shown (it is rethrown,
 * and the console's error page answers).
 */
export function refusal(error: unknown): { message: string; status: PageStatus } {
  if (!(error instanceof AppError) || error.code === 'internal') throw error;
  const issues = (error.details as { issues?: { path?: string; message?: string }[] }).issues;
  const first = issues?.[0];
  const detail = first?.message ? ` (${first.path ? `${first.path}: ` : ''}${first.message})` : '';
  return { message: error.message + detail, status: ADMIN_HTTP_STATUS[error.code] as PageStatus };
}

/** The notice a `?done=` code names in a page's own table (only its own keys: `toString` names nothing). */
export function noticeOf(c: ConsoleContext, notices: Readonly<Record<string, string>>): string | undefined {
  const code = c.req.query('done');
  return code && Object.hasOwn(notices, code) ? notices[code] : undefined;
}

/** Redirects after a successful form (303), with a notice code the target page names. */
export function done(c: ConsoleContext, path: string, notice: string): Response {
  const url = new URL(path, 'http://console.invalid');
  url.searchParams.set('done', notice);
  return c.redirect(url.pathname + url.search, 303);
}
