/**
 * loadOnce: a pepper or a model is loaded once however many callers ask at the
 * same time, and a load that failed is tried again on the next call, so a fixed
 * file is picked up without a restart.
 */
import { describe, expect, it } from 'vitest';
import { loadOnce } from '../../lambdas/errors/load-once.ts';

describe('loadOnce', () => {
  it('runs the load once for concurrent and later callers, who all get its result', async () => {
    let loads = 0;
    let finish!: (value: string) => void;
    const pepper = loadOnce(() => {
      loads += 1;
      return new Promise<string>((resolve) => (finish = resolve));
    });
    const waiting = [pepper(), pepper(), pepper()];
    finish('secret');
    expect(await Promise.all(waiting)).toEqual(['secret', 'secret', 'secret']);
    expect(await pepper()).toBe('secret');
    expect(loads).toBe(1);
  });

  it('tells every waiting caller of a failure, then loads again on the next call', async () => {
    const outcomes = [() => Promise.reject(new Error('pepper file missing')), () => Promise.resolve('restored')];
    let loads = 0;
    const pepper = loadOnce(() => outcomes[loads++]!());
    const first = [pepper(), pepper()];
    await expect(first[0]).rejects.toThrow('pepper file missing');
    await expect(first[1]).rejects.toThrow('pepper file missing');
    expect(await pepper()).toBe('restored');
    expect(await pepper()).toBe('restored');
    expect(loads).toBe(2);
  });
});
