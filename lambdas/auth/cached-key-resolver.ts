/**
 * A `KeyResolver` that remembers the keys it has resolved.
 *
 * - On the local server every change to keys passes through this process (owner
 *   commands reach the store through its admin endpoint), so an entry lasts until
 *   the hour changes (so the key's coarse last use is stamped again) or until
 *   `forget()`, which the server calls when a key is revoked or its quota changes.
 *   A handshake, a ping or a list then never waits for the database, even while an
 *   import holds it.
 * - On Lambda keys change elsewhere (the admin function), so entries also expire
 *   after `maxAgeMs`: a revocation or a new quota takes effect within that time,
 *   and steady traffic costs one lookup per key per period instead of one per request.
 *
 * Unknown keys are not remembered, so a stream of made-up keys cannot grow memory.
 * Entries are keyed by a SHA-256 of the key, never the key itself.
 */
import { createHash } from 'node:crypto';
import type { ActiveKey } from './key-repository.ts';
import type { KeyResolver } from './bearer.ts';

export interface CachedKeyResolverOptions {
  /** Clock in epoch milliseconds. @default Date.now */
  readonly now?: () => number;
  /** How long an entry may answer before the store is asked again. @default until the hour changes */
  readonly maxAgeMs?: number;
}

const HOUR_MS = 3_600_000;

export class CachedKeyResolver implements KeyResolver {
  private readonly known = new Map<string, { key: ActiveKey; hour: number; at: number }>();
  private readonly now: () => number;
  private readonly maxAgeMs: number;

  constructor(
    private readonly inner: KeyResolver,
    options: CachedKeyResolverOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? Number.POSITIVE_INFINITY;
  }

  async resolve(key: string): Promise<ActiveKey | undefined> {
    const id = createHash('sha256').update(key).digest('base64url');
    const at = this.now();
    const hour = Math.floor(at / HOUR_MS);
    const cached = this.known.get(id);
    if (cached && cached.hour === hour && at - cached.at < this.maxAgeMs) return cached.key;
    const resolved = await this.inner.resolve(key);
    if (resolved) this.known.set(id, { key: resolved, hour, at });
    else this.known.delete(id);
    return resolved;
  }

  /** Forgets every key: the next use of each is checked against the store again. */
  forget(): void {
    this.known.clear();
  }
}
