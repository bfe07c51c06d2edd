/**
 * A wrong option passed by code (a worker count, a batch size) stops at
 * construction with a RangeError that names the option.
 */
import { describe, expect, it } from 'vitest';
import { positiveInteger } from '../../lambdas/errors/argument-checks.ts';

describe('positiveInteger', () => {
  it('passes a whole number from 1 up through unchanged', () => {
    expect(positiveInteger('threads', 1)).toBe(1);
    expect(positiveInteger('threads', 64)).toBe(64);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s, naming the option', (value) => {
    expect(() => positiveInteger('threads', value)).toThrow(RangeError);
    expect(() => positiveInteger('threads', value)).toThrow('threads must be a positive integer.');
  });
});
