/**
 * The frame every port contract suite shares: open one adapter before the suite,
 * close it after, and hand the tests a getter for it. A contract file describes
 * the behaviour; each `*.test.ts` names the adapters that must show it.
 */
import { afterAll, beforeAll, describe } from 'vitest';

export interface UnderTest {
  close(): Promise<void>;
}

export function describeContract<T extends UnderTest>(port: string, adapter: string, open: () => Promise<T>, suite: (subject: () => T) => void): void {
  describe(`${port} contract: ${adapter}`, () => {
    let subject: T | undefined;
    beforeAll(async () => {
      subject = await open();
    }, 300_000);
    afterAll(() => subject?.close());
    suite(() => {
      if (!subject) throw new Error(`the ${adapter} adapter did not open`);
      return subject;
    });
  });
}
