/**
 * Retrieval metrics against hand-computed values (trec_eval / BEIR definitions),
 * plus the deterministic tune/test query split.
 */
import { describe, expect, it } from 'vitest';
import {
  evaluateRun,
  fnv1a32,
  mrrAt,
  ndcgAt,
  percentile,
  recallAt,
  splitByQueryId,
} from '../../bin/eval/metrics.ts';

const rel = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('nDCG@k', () => {
  it('is 1 for a perfect ranking', () => {
    expect(ndcgAt(10, ['a'], rel({ a: 1 }))).toBe(1);
    expect(ndcgAt(10, ['a', 'b', 'x'], rel({ a: 1, b: 1 }))).toBe(1);
  });

  it('one relevant doc at rank 3 of 1 relevant = 1/log2(4) = 0.5', () => {
    expect(ndcgAt(10, ['x', 'y', 'a'], rel({ a: 1 }))).toBeCloseTo(0.5, 12);
  });

  it('two relevant found at ranks 1 and 4', () => {
    // DCG = 1 + 1/log2(5); IDCG = 1 + 1/log2(3)
    const expected = (1 + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3));
    expect(expected).toBeCloseTo(0.877215, 5);
    expect(ndcgAt(10, ['a', 'x', 'y', 'b'], rel({ a: 1, b: 1 }))).toBeCloseTo(expected, 12);
  });

  it('uses graded gains and an ideal ranking from the sorted qrels', () => {
    // ranked b (gain 1) then a (gain 2): DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3)
    const expected = (1 + 2 / Math.log2(3)) / (2 + 1 / Math.log2(3));
    expect(expected).toBeCloseTo(0.859719, 5);
    expect(ndcgAt(10, ['b', 'a'], rel({ a: 2, b: 1 }))).toBeCloseTo(expected, 12);
    expect(ndcgAt(10, ['a', 'b'], rel({ a: 2, b: 1 }))).toBe(1);
  });

  it('cuts the ideal ranking at k too', () => {
    // 3 relevant, k = 1, the top doc is relevant → 1.
    expect(ndcgAt(1, ['a', 'x'], rel({ a: 1, b: 1, c: 1 }))).toBe(1);
    // 3 relevant, k = 2, one found at rank 2: (1/log2 3) / (1 + 1/log2 3)
    expect(ndcgAt(2, ['x', 'a'], rel({ a: 1, b: 1, c: 1 }))).toBeCloseTo(
      1 / Math.log2(3) / (1 + 1 / Math.log2(3)),
      12,
    );
  });

  it('ignores docs past k, zero/negative judgments and repeated ids', () => {
    const ranked = Array.from({ length: 10 }, (_, i) => `x${i}`).concat('a');
    expect(ndcgAt(10, ranked, rel({ a: 1 }))).toBe(0);
    expect(ndcgAt(10, ['n', 'a'], rel({ a: 1, n: 0 }))).toBeCloseTo(1 / Math.log2(3), 12);
    expect(ndcgAt(10, ['x', 'x', 'a'], rel({ a: 1 }))).toBeCloseTo(1 / Math.log2(3), 12);
  });

  it('is 0 with no results or no relevant doc', () => {
    expect(ndcgAt(10, [], rel({ a: 1 }))).toBe(0);
    expect(ndcgAt(10, ['a'], rel({ a: 0 }))).toBe(0);
    expect(ndcgAt(10, ['a'], rel({}))).toBe(0);
  });
});

describe('Recall@k', () => {
  it('is found relevant over all relevant (score > 0)', () => {
    expect(recallAt(10, ['a', 'x'], rel({ a: 1, b: 1 }))).toBe(0.5);
    expect(recallAt(10, ['a', 'b'], rel({ a: 1, b: 2 }))).toBe(1);
    // The zero-scored judgment is neither found nor counted.
    expect(recallAt(10, ['a', 'n'], rel({ a: 1, b: 1, n: 0 }))).toBe(0.5);
  });

  it('only counts the top k', () => {
    expect(recallAt(2, ['x', 'a', 'b'], rel({ a: 1, b: 1 }))).toBe(0.5);
    expect(recallAt(3, ['x', 'a', 'b'], rel({ a: 1, b: 1 }))).toBe(1);
  });

  it('is 0 with no results or no relevant doc', () => {
    expect(recallAt(10, [], rel({ a: 1 }))).toBe(0);
    expect(recallAt(10, ['a'], rel({}))).toBe(0);
  });
});

describe('MRR@k', () => {
  it('is 1 / rank of the first relevant doc', () => {
    expect(mrrAt(10, ['a', 'b'], rel({ a: 1 }))).toBe(1);
    expect(mrrAt(10, ['x', 'y', 'a', 'b'], rel({ a: 1, b: 1 }))).toBeCloseTo(1 / 3, 12);
  });

  it('is 0 when the first relevant doc is past k, or there are no results', () => {
    const ranked = Array.from({ length: 10 }, (_, i) => `x${i}`).concat('a');
    expect(mrrAt(10, ranked, rel({ a: 1 }))).toBe(0);
    expect(mrrAt(11, ranked, rel({ a: 1 }))).toBeCloseTo(1 / 11, 12);
    expect(mrrAt(10, [], rel({ a: 1 }))).toBe(0);
  });
});

describe('evaluateRun', () => {
  const qrels = new Map([
    ['q1', rel({ a: 1 })],
    ['q2', rel({ b: 1, c: 1 })],
    ['q3', rel({ d: 1 })],
  ]);

  it('averages over the queries with qrels; a query with no results counts 0', () => {
    const run = new Map<string, string[]>([
      ['q1', ['a']], // perfect
      ['q2', ['x', 'y', 'b']], // one of two, at rank 3
      ['q3', []], // no results
      ['q-unjudged', ['z']], // not in qrels: ignored
    ]);
    const m = evaluateRun(run, qrels);
    const q2Ndcg = 1 / Math.log2(4) / (1 + 1 / Math.log2(3));
    expect(m.ndcg_at_10).toBeCloseTo((1 + q2Ndcg + 0) / 3, 12);
    expect(m.recall_at_10).toBeCloseTo((1 + 0.5 + 0) / 3, 12);
    expect(m.recall_at_100).toBeCloseTo((1 + 0.5 + 0) / 3, 12);
    expect(m.mrr_at_10).toBeCloseTo((1 + 1 / 3 + 0) / 3, 12);
  });

  it('counts a query missing from the run as 0', () => {
    const m = evaluateRun(new Map([['q1', ['a']]]), qrels);
    expect(m.ndcg_at_10).toBeCloseTo(1 / 3, 12);
    expect(m.mrr_at_10).toBeCloseTo(1 / 3, 12);
  });

  it('distinguishes Recall@10 from Recall@100', () => {
    const ranked = Array.from({ length: 20 }, (_, i) => `x${i}`).concat('a');
    const m = evaluateRun(new Map([['q1', ranked]]), new Map([['q1', rel({ a: 1 })]]));
    expect(m).toEqual({ ndcg_at_10: 0, recall_at_10: 0, recall_at_100: 1, mrr_at_10: 0 });
  });

  it('can restrict the average to a subset of query ids', () => {
    const run = new Map<string, string[]>([['q1', ['a']], ['q3', []]]);
    expect(evaluateRun(run, qrels, ['q1']).ndcg_at_10).toBe(1);
    expect(evaluateRun(run, qrels, ['q1', 'q3', 'unknown']).ndcg_at_10).toBe(0.5);
  });

  it('returns zeros when nothing is evaluable', () => {
    expect(evaluateRun(new Map(), new Map())).toEqual({
      ndcg_at_10: 0,
      recall_at_10: 0,
      recall_at_100: 0,
      mrr_at_10: 0,
    });
  });
});

describe('percentile (linear interpolation, numpy default)', () => {
  it('interpolates between closest ranks', () => {
    const v = [40, 10, 30, 20]; // sorted 10 20 30 40
    expect(percentile(v, 0)).toBe(10);
    expect(percentile(v, 100)).toBe(40);
    expect(percentile(v, 50)).toBe(25);
    expect(percentile(v, 90)).toBeCloseTo(37, 12); // h = 2.7 → 30 + 0.7·10
    expect(percentile([1, 2, 3, 4, 5], 50)).toBe(3);
    expect(percentile([7], 95)).toBe(7);
  });

  it('is NaN on empty input and rejects p outside [0, 100]', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
});

describe('splitByQueryId', () => {
  const ids = Array.from({ length: 300 }, (_, i) => String(i + 1));

  it('uses the standard 32-bit FNV-1a', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('is deterministic and independent of input order', () => {
    const a = splitByQueryId(ids);
    const b = splitByQueryId([...ids].reverse());
    expect(splitByQueryId(ids)).toEqual(a);
    expect([...b.tune].sort()).toEqual([...a.tune].sort());
    expect([...b.test].sort()).toEqual([...a.test].sort());
  });

  it('partitions the ids roughly half/half', () => {
    const { tune, test } = splitByQueryId(ids);
    expect(tune.length + test.length).toBe(300);
    expect(new Set([...tune, ...test]).size).toBe(300);
    expect(tune.filter((id) => test.includes(id))).toEqual([]);
    expect(tune.length).toBeGreaterThan(120);
    expect(tune.length).toBeLessThan(180);
  });

  it('keeps input order within each half and drops duplicates', () => {
    const { tune, test } = splitByQueryId([...ids, ...ids]);
    expect(tune.length + test.length).toBe(300);
    expect(tune).toEqual(ids.filter((id) => tune.includes(id)));
    expect(test).toEqual(ids.filter((id) => test.includes(id)));
  });

  it('gives a different split with a different salt', () => {
    expect(splitByQueryId(ids, 'other').tune).not.toEqual(splitByQueryId(ids).tune);
  });
});
