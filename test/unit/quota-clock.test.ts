/**
 * Quota days are UTC calendar days, whatever the caller's or the server's time
 * zone, and a refused call's Retry-After counts the whole seconds to the next UTC
 * midnight, never 0.
 */
import { describe, expect, it } from 'vitest';
import { secondsUntilNextUtcMidnight, utcDay } from '../../lambdas/quota/quota-clock.ts';

describe('utcDay', () => {
  it('counts a call by its UTC date, not the local one', () => {
    expect(utcDay(new Date('2024-03-10T23:30:00-05:00'))).toBe('2024-03-11');
    expect(utcDay(new Date('2024-03-11T00:30:00+02:00'))).toBe('2024-03-10');
    expect(utcDay(new Date('2024-12-31T23:59:59.999Z'))).toBe('2024-12-31');
  });
});

describe('secondsUntilNextUtcMidnight', () => {
  it.each([
    ['midnight itself', '2024-03-11T00:00:00.000Z', 86_400],
    ['noon', '2024-03-11T12:00:00.000Z', 43_200],
    ['the last hour of a year', '2024-12-31T23:00:00.000Z', 3_600],
    ['the last day of a leap February', '2024-02-29T18:00:00.000Z', 21_600],
    ['part of a second before midnight, rounded up', '2024-03-11T23:59:58.400Z', 2],
    ['a millisecond before midnight', '2024-03-11T23:59:59.999Z', 1],
  ])('at %s', (_case, now, seconds) => {
    expect(secondsUntilNextUtcMidnight(new Date(now))).toBe(seconds);
  });
});
