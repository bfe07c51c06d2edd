/**
 * Per-address limits on the unauthenticated OAuth endpoints, counted in the
 * runtime's quota store (the local store's counters, DynamoDB on AWS), under an
 * HMAC of the address like guest quotas, never the address itself.
 *
 * A rule allows so many events per address per hour and per UTC day; reaching
 * the hourly count means waiting for the next hour, reaching the daily one, for
 * the next UTC midnight. That is the backoff: a few mistakes cost nothing, a
 * burst costs the rest of the hour, a sustained attempt the rest of the day.
 *
 * - `take` counts an event that is about to happen (a registration, a document
 *   fetch) and says whether it may;
 * - `blocked` and `count` split the two for events judged afterwards (a wrong key
 *   on the consent page is counted only once it has turned out wrong).
 */
import ipaddr from 'ipaddr.js';
import type { QuotaStore } from '../ports/quota-store.ts';
import type { Secrets } from '../ports/secrets.ts';
import { hashClientIp } from '../privacy/hashing.ts';
import { secondsUntilNextUtcMidnight, utcDay } from './quota-clock.ts';

export interface ThrottleRule {
  /** Names the counters, e.g. `register`. */
  readonly name: string;
  readonly perHour: number;
  readonly perDay: number;
}

interface Counters {
  readonly at: Date;
  readonly hour: string;
  readonly day: string;
}

/** Refused: come back after this many seconds. */
export interface Throttled {
  readonly retryAfterSeconds: number;
}

export class AddressThrottle {
  constructor(
    private readonly store: QuotaStore,
    private readonly secrets: Secrets,
    private readonly now: () => Date,
  ) {}

  /** Counts one event for `address` unless the rule's hourly or daily count is reached. */
  async take(rule: ThrottleRule, address: string): Promise<Throttled | undefined> {
    return this.consume(rule, await this.subjects(rule, address));
  }

  /**
   * Counts one event for the whole server (every address together) unless the
   * rule's hourly or daily count is reached: a bound on what many addresses, each
   * under its own limit, can do together.
   */
  takeServerWide(rule: ThrottleRule): Promise<Throttled | undefined> {
    return this.consume(rule, this.counters(`oauth-${rule.name}:all`));
  }

  /** Counts one event on the hourly and then the daily counter, unless either is full. */
  private async consume(rule: ThrottleRule, { hour, day, at }: Counters): Promise<Throttled | undefined> {
    if (!(await this.store.consume(hour, utcDay(at), rule.perHour)).allowed) return { retryAfterSeconds: secondsUntilNextHour(at) };
    if (!(await this.store.consume(day, utcDay(at), rule.perDay)).allowed) return { retryAfterSeconds: secondsUntilNextUtcMidnight(at) };
    return undefined;
  }

  /** Whether `address` has reached the rule's hourly or daily count, without counting. */
  async blocked(rule: ThrottleRule, address: string): Promise<Throttled | undefined> {
    const { hour, day, at } = await this.subjects(rule, address);
    if ((await this.store.used(day, utcDay(at))) >= rule.perDay) return { retryAfterSeconds: secondsUntilNextUtcMidnight(at) };
    if ((await this.store.used(hour, utcDay(at))) >= rule.perHour) return { retryAfterSeconds: secondsUntilNextHour(at) };
    return undefined;
  }

  /** Counts one event for `address` (up to the rule's counts: past them, it is blocked anyway). */
  async count(rule: ThrottleRule, address: string): Promise<void> {
    const { hour, day, at } = await this.subjects(rule, address);
    await this.store.consume(hour, utcDay(at), rule.perHour);
    await this.store.consume(day, utcDay(at), rule.perDay);
  }

  private async subjects(rule: ThrottleRule, address: string): Promise<Counters> {
    return this.counters(`oauth-${rule.name}:${hashClientIp(await this.secrets.pepper(), countedAddress(address))}`);
  }

  /** The day's counter is `subject`; the hour's adds the UTC hour. */
  private counters(subject: string): Counters {
    const at = this.now();
    return { at, day: subject, hour: `${subject}:h${String(at.getUTCHours()).padStart(2, '0')}` };
  }
}

/** The address as counted: IPv4 as it is, IPv6 as its /64 (IPv4-mapped IPv6 as the IPv4 address). */
export function countedAddress(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

function secondsUntilNextHour(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
