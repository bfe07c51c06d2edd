/**
 * Quota days are UTC calendar days. A refused call is told to come back at the
 * next UTC midnight (`Retry-After`, in whole seconds, at least 1).
 */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function secondsUntilNextUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
