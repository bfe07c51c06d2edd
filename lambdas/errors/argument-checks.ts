/**
 * Checks on options that code (not callers) passes in: a wrong value is a
 * programming error, so it throws a `RangeError` at construction instead of
 * misbehaving later. Caller input goes through the zod schemas instead.
 */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer.`);
  return value;
}
