/**
 * Who may use the owner console, held in memory by the process that serves it.
 *
 * - A **link token** is what `chatctx console` prints (inside a URL, like a notebook
 *   server's): single use, valid for a few minutes. Opening the link trades it for a
 *   session and the page redirects at once, so the token leaves the address bar and
 *   the history.
 * - A **session** is a random cookie value (`HttpOnly`, `SameSite=Strict`), with an
 *   idle and an absolute lifetime, and its own CSRF token that every form carries.
 *
 * Only SHA-256 digests of tokens and session ids are kept, so a heap dump does not
 * hand out a live session, and comparisons are constant-time. Both maps are bounded:
 * the oldest entries go first, so a caller that asks for links in a loop cannot grow
 * the process.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const CONSOLE_LIMITS = {
  /** A printed link works once, within this time. */
  linkTtlMs: 10 * 60 * 1000,
  /** A session ends after this long without a request… */
  idleMs: 2 * 60 * 60 * 1000,
  /** …and this long after it began, whatever happens. */
  absoluteMs: 12 * 60 * 60 * 1000,
  /** Unused links and live sessions kept at most; beyond, the oldest go. */
  maxLinks: 16,
  maxSessions: 32,
} as const;

export interface ConsoleSession {
  /** The value the forms carry (`_csrf`). */
  readonly csrf: string;
  readonly startedAt: number;
  lastSeenAt: number;
  /** Something to show once on the next page (a new key), then forget. */
  reveal?: { readonly kind: string; readonly value: unknown };
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');
const secret = () => randomBytes(32).toString('base64url');

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Deletes the oldest entries (insertion order) until at most `max` are left. */
function trim<V>(map: Map<string, V>, max: number): void {
  for (const key of map.keys()) {
    if (map.size <= max) return;
    map.delete(key);
  }
}

export class ConsoleSessions {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new single-use link token. */
  issueLink(): string {
    const token = secret();
    this.links.set(digest(token), this.now() + CONSOLE_LIMITS.linkTtlMs);
    trim(this.links, CONSOLE_LIMITS.maxLinks);
    return token;
  }

  /** Trades a link token for a session id; undefined when the token is unknown, used or expired. */
  redeem(token: string): string | undefined {
    const key = digest(token);
    const expires = this.links.get(key);
    this.links.delete(key);
    if (expires === undefined || expires < this.now()) return undefined;
    const id = secret();
    const at = this.now();
    this.sessions.set(digest(id), { csrf: secret(), startedAt: at, lastSeenAt: at });
    trim(this.sessions, CONSOLE_LIMITS.maxSessions);
    return id;
  }

  /** The live session a cookie names (its idle clock restarts), or undefined. */
  session(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const key = digest(id);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    const at = this.now();
    if (at - session.lastSeenAt > CONSOLE_LIMITS.idleMs || at - session.startedAt > CONSOLE_LIMITS.absoluteMs) {
      this.sessions.delete(key);
      return undefined;
    }
    session.lastSeenAt = at;
    return session;
  }

  /** Whether a form's `_csrf` value is this session's. */
  csrfMatches(session: ConsoleSession, presented: unknown): boolean {
    return typeof presented === 'string' && sameText(presented, session.csrf);
  }

  end(id: string | undefined): void {
    if (id) this.sessions.delete(digest(id));
  }
}
