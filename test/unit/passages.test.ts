/**
 * recordPassages cuts records into title-prefixed, overlapping word windows small
 * enough for USE-lite's ~128-token input.
 */
import { describe, expect, it } from 'vitest';
import { recordPassages } from '../../lambdas/embeddings/passages.ts';

const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;
const numbered = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `w${from + i}`).join(' ');

describe('recordPassages', () => {
  it('turns a short record into exactly one passage that starts with the title', () => {
    // Prepare
    const record = { title: 'Use stable keys in React lists', body: ['Index keys break state on reorder', 'Use an id from the data.'] };

    // Act
    const passages = recordPassages(record);

    // Assess
    expect(passages).toEqual([
      'Use stable keys in React lists. Index keys break state on reorder. Use an id from the data.',
    ]);
  });

  it('cuts a long record into overlapping windows that stay within the word budget', () => {
    // Prepare
    const title = 'Keyset pagination';
    const record = { title, body: [numbered(0, 100), numbered(100, 250)] };

    // Act
    const passages = recordPassages(record, 90, 70);

    // Assess
    expect(passages.length).toBeGreaterThan(1);
    for (const passage of passages) {
      expect(passage.startsWith('Keyset pagination. ')).toBe(true);
      expect(wordCount(passage)).toBeLessThanOrEqual(90);
    }
    // Consecutive windows share words, and together they cover the whole body.
    const bodies = passages.map((p) => p.slice('Keyset pagination. '.length).split(' '));
    for (let i = 1; i < bodies.length; i += 1) {
      const shared = bodies[i]!.filter((word) => bodies[i - 1]!.includes(word));
      expect(shared.length).toBeGreaterThan(0);
    }
    const covered = new Set(bodies.flat().map((word) => word.replace(/\.$/, '')));
    for (let i = 0; i < 250; i += 1) expect(covered.has(`w${i}`)).toBe(true);
  });

  it('counts at most 20 title words toward the budget, truncating a longer title', () => {
    // Prepare
    const longTitle = numbered(1000, 1030);
    const record = { title: longTitle, body: [numbered(0, 200)] };

    // Act
    const passages = recordPassages(record, 90, 70);

    // Assess
    for (const passage of passages) {
      expect(passage.startsWith(`${numbered(1000, 1020)}. w`)).toBe(true);
      expect(passage).not.toContain('w1020');
      expect(wordCount(passage)).toBeLessThanOrEqual(90);
    }
  });

  it('never returns an empty passage', () => {
    // Prepare
    const records = [
      { title: '', body: ['   ', ''] },
      { title: '   ', body: [] },
      { title: 'Only a title', body: ['', '  '] },
      { title: '', body: ['only a body'] },
      { title: 'Exact fit', body: [numbered(0, 88)] },
    ];

    // Act
    const results = records.map((record) => recordPassages(record));

    // Assess
    expect(results[0]).toEqual([]);
    expect(results[1]).toEqual([]);
    expect(results[2]).toEqual(['Only a title']);
    expect(results[3]).toEqual(['only a body']);
    expect(results[4]).toHaveLength(1);
    for (const passage of results.flat()) expect(passage.trim()).not.toBe('');
  });
});
