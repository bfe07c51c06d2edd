/**
 * Who is counted, against which limit, and what the caller is told: the quota
 * policy of the MCP endpoint, over any `QuotaStore`.
 *
 * - A guest is counted per client IP, as an HMAC of the address (never the
 *   address); a key per key id. A guest's limit is the configured daily limit; a
 *   key's is its own quota, or none.
 * - Only a `tools/call` request is counted (the endpoint decides which requests
 *   those are); a refused one is told to come back at the next UTC midnight.
 * - Guests see `X-Guest-Quota-Limit` and `X-Guest-Quota-Remaining` on every
 *   answer: from the count itself when a call was counted, from one read otherwise.
 */
import type { QuotaStore } from '../ports/quota-store.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Caller } from '../auth/bearer.ts';
import { hashClientIp } from '../privacy/hashing.ts';
import { secondsUntilNextUtcMidnight, utcDay } from './quota-clock.ts';

export interface QuotaPolicyOptions {
  readonly store: QuotaStore;
  readonly secrets: Secrets;
  /** Tool calls per guest IP per UTC day; 0 turns guest access off. */
  readonly guestDailyLimit: number;
  readonly now?: () => Date;
}

export type QuotaOutcome =
  | { readonly allowed: true; readonly headers: Record<string, string> }
  | { readonly allowed: false; readonly headers: Record<string, string>; readonly retryAfterSeconds: number };

export class QuotaPolicy {
  private readonly now: () => Date;

  constructor(private readonly options: QuotaPolicyOptions) {
    this.now = options.now ?? (() => new Date());
  }

  get guestsAllowed(): boolean {
    return this.options.guestDailyLimit > 0;
  }

  /** The counter a caller's calls go to. */
  async subject(caller: Caller, clientIp: string): Promise<string> {
    return caller.kind === 'guest' ? `guest:${hashClientIp(await this.options.secrets.pepper(), clientIp)}` : `key:${caller.id}`;
  }

  /** Counts one tool call unless the caller's limit is reached; a caller without a limit is not counted. */
  async consume(caller: Caller, subject: string): Promise<QuotaOutcome> {
    const limit = caller.kind === 'guest' ? this.options.guestDailyLimit : caller.dailyQuota;
    if (limit === null) return { allowed: true, headers: {} };
    const now = this.now();
    const decision = await this.options.store.consume(subject, utcDay(now), limit);
    const headers = caller.kind === 'guest' ? guestHeaders(limit, decision.remaining) : {};
    if (decision.allowed) return { allowed: true, headers };
    return { allowed: false, headers, retryAfterSeconds: secondsUntilNextUtcMidnight(now) };
  }

  /** The guest headers for an answer that counted nothing (handshake, lists, errors). */
  async uncountedHeaders(caller: Caller, subject: string): Promise<Record<string, string>> {
    if (caller.kind !== 'guest') return {};
    const limit = this.options.guestDailyLimit;
    const used = await this.options.store.used(subject, utcDay(this.now()));
    return guestHeaders(limit, Math.max(0, limit - used));
  }
}

function guestHeaders(limit: number, remaining: number): Record<string, string> {
  return { 'X-Guest-Quota-Limit': String(limit), 'X-Guest-Quota-Remaining': String(remaining) };
}
