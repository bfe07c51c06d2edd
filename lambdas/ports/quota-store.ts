/**
 * The `QuotaStore` port: atomic daily counters for tool calls.
 *
 * A store never decides policy (limits, what counts); it only counts, atomically,
 * so that N parallel calls against a limit L succeed exactly min(N, L) times.
 */
export interface QuotaDecision {
  /** Whether this call fits in the limit and was counted. */
  readonly allowed: boolean;
  /** Calls left today after this one (0 when refused). */
  readonly remaining: number;
}

export interface QuotaStore {
  /** Counts one call for `subject` on `day` (YYYY-MM-DD, UTC) unless `limit` is reached. */
  consume(subject: string, day: string, limit: number): Promise<QuotaDecision>;
  /** Calls already counted for `subject` on `day`, without counting one. */
  used(subject: string, day: string): Promise<number>;
}
