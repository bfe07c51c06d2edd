/**
 * A `QuotaStore` over another, for the one process that writes its counters (the
 * local server holds its data directory's lock). Every count still goes to the
 * store underneath, atomically; what it adds is a copy in memory of today's
 * counters, read once at start and updated with each count. Reading a guest's
 * remaining calls (on a handshake, a ping, a list) is then answered from memory and
 * never waits for the database, even while an import holds it.
 *
 * For any day from the start on, a counter absent from memory is 0: nobody else
 * writes them. Earlier days are read from the store.
 */
import type { QuotaDecision, QuotaStore } from '../ports/quota-store.ts';

export class MirroredQuotaStore implements QuotaStore {
  private readonly counts = new Map<string, number>();

  private constructor(
    private readonly inner: QuotaStore,
    private readonly firstDay: string,
  ) {}

  /** Mirrors `today`'s counters, listed by `load`, and counts from there. */
  static async open(inner: QuotaStore, today: string, load: (day: string) => Promise<{ subject: string; used: number }[]>): Promise<MirroredQuotaStore> {
    const store = new MirroredQuotaStore(inner, today);
    for (const { subject, used } of await load(today)) store.counts.set(key(subject, today), used);
    return store;
  }

  async consume(subject: string, day: string, limit: number): Promise<QuotaDecision> {
    const decision = await this.inner.consume(subject, day, limit);
    if (day >= this.firstDay) {
      const used = decision.allowed ? limit - decision.remaining : Math.max(limit, 0);
      const k = key(subject, day);
      this.counts.set(k, Math.max(this.counts.get(k) ?? 0, used));
      this.dropDaysBefore(day);
    }
    return decision;
  }

  async used(subject: string, day: string): Promise<number> {
    if (day < this.firstDay) return this.inner.used(subject, day);
    return this.counts.get(key(subject, day)) ?? 0;
  }

  /** Counters of past days are never read from memory again once a later day is counted. */
  private dropDaysBefore(day: string): void {
    if (this.counts.size < 10_000) return;
    for (const k of this.counts.keys()) if (k.slice(-10) < day) this.counts.delete(k);
  }
}

const key = (subject: string, day: string) => `${subject}\u0000${day}`;
