/**
 * A `KeyResolver` that remembers the keys it has resolved, for a process through
 * which every change to keys passes (the local server: owner commands reach the
 * store through its admin endpoint). Answering a known key from memory means a
 * handshake, a ping or a list never waits for the database, even while an import
 * holds it.
 *
 * An entry lasts until the hour changes (so the key's coarse last use is stamped
 * again) or until `forget()`, which the server calls when a key is revoked or its
 * quota changes. Unknown keys are not remembered, so a stream of made-up keys cannot
 * grow memory. Entries are keyed by a SHA-256 of the key, never the key itself.
 */
import { createHash } from 'node:crypto';
import type { ActiveKey } from './key-repository.ts';
import type { KeyResolver } from './bearer.ts';

export class CachedKeyResolver implements KeyResolver {
  private readonly known = new Map<string, { key: ActiveKey; hour: number }>();

  constructor(
    private readonly inner: KeyResolver,
    private readonly now: () => number = Date.now,
  ) {}

  async resolve(key: string): Promise<ActiveKey | undefined> {
    const id = createHash('sha256').update(key).digest('base64url');
    const hour = Math.floor(this.now() / 3_600_000);
    const cached = this.known.get(id);
    if (cached && cached.hour === hour) return cached.key;
    const resolved = await this.inner.resolve(key);
    if (resolved) this.known.set(id, { key: resolved, hour });
    else this.known.delete(id);
    return resolved;
  }

  /** Forgets every key: the next use of each is checked against the store again. */
  forget(): void {
    this.known.clear();
  }
}
