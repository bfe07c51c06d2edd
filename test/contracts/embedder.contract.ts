/**
 * What every `Embedder` promises (`lambdas/ports/embedder.ts`), as one suite that
 * runs against each adapter: one unit vector of the declared width per text, in
 * input order, the same vector for the same text, nothing for nothing, and a
 * refusal before any work for blank text or an aborted signal.
 */
import { expect, it } from 'vitest';
import { describeContract, type UnderTest } from './contract.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';

export interface EmbedderUnderTest extends UnderTest {
  readonly embedder: Embedder;
}

const TEXTS = ['hash passwords with argon2id', 'set fetch timeouts with AbortSignal', 'stable keys for React lists'];

export function describeEmbedderContract(adapter: string, open: () => Promise<EmbedderUnderTest>): void {
  describeContract('Embedder', adapter, open, (subject) => {
    const embedder = () => subject().embedder;

    it('returns one unit vector of the declared width per text, in input order', async () => {
      const vectors = await embedder().embed(TEXTS);
      expect(vectors).toHaveLength(TEXTS.length);
      for (const vector of vectors) {
        expect(vector).toBeInstanceOf(Float32Array);
        expect(vector).toHaveLength(embedder().dimensions);
        expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
      }
      const reversed = await embedder().embed([...TEXTS].reverse());
      reversed.reverse().forEach((vector, i) => expect(maxDifference(vector, vectors[i]!)).toBeLessThan(1e-5));
      expect(maxDifference(vectors[0]!, vectors[1]!)).toBeGreaterThan(1e-3);
    });

    it('gives each of many concurrent callers the vectors of its own texts', async () => {
      const calls = [[TEXTS[0]!], [TEXTS[1]!, TEXTS[2]!], [TEXTS[2]!], [TEXTS[1]!], [TEXTS[0]!, TEXTS[2]!, TEXTS[1]!], [TEXTS[2]!]];
      const alone = await embedder().embed(TEXTS);
      const together = await Promise.all(calls.map((texts) => embedder().embed(texts)));
      together.forEach((vectors, call) => {
        expect(vectors).toHaveLength(calls[call]!.length);
        vectors.forEach((vector, i) => expect(maxDifference(vector, alone[TEXTS.indexOf(calls[call]![i]!)]!)).toBeLessThan(1e-5));
      });
    });

    it('returns nothing for no texts', async () => {
      expect(await embedder().embed([])).toEqual([]);
    });

    it('refuses a blank text, naming only its position', async () => {
      await expect(embedder().embed(['fine', ' \n '])).rejects.toThrow(/index 1/);
    });

    it("rejects with the caller's abort reason when the signal is already aborted", async () => {
      const controller = new AbortController();
      const reason = new Error('cancelled by caller');
      controller.abort(reason);
      await expect(embedder().embed(['a query'], controller.signal)).rejects.toBe(reason);
    });

    it('names its provider, model and width', () => {
      expect(embedder().provider).toMatch(/\S/);
      expect(embedder().model).toMatch(/\S/);
      expect(embedder().dimensions).toBe(512);
    });
  });
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  return a.reduce((max, value, i) => Math.max(max, Math.abs(value - b[i]!)), 0);
}
