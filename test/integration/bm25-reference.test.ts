/**
 * The BM25 reference line (wink-bm25-text-search) on a tiny hand-written corpus:
 * obvious queries put the obvious doc first; a stop-word-only query finds nothing.
 */
import { describe, expect, it } from 'vitest';
import { Bm25Reference, bm25Tokens } from '../../bin/eval/bm25-reference.ts';
import type { BeirDoc } from '../../bin/eval/beir.ts';

const corpus: BeirDoc[] = [
  { id: 'd1', title: 'Photosynthesis in plants', text: 'Green plants convert sunlight, water and carbon dioxide into glucose and oxygen in their chloroplasts.' },
  { id: 'd2', title: 'Volcanic eruptions', text: 'Magma rising through the crust erupts as lava, ash and volcanic gases.' },
  { id: 'd3', title: 'Insulin and diabetes', text: 'Type 1 diabetes is caused by autoimmune destruction of pancreatic beta cells that secrete insulin.' },
  { id: 'd4', title: 'Medieval castles', text: 'Stone castles with moats and keeps were built across Europe in the Middle Ages.' },
  { id: 'd5', title: 'Black holes', text: 'A black hole forms when a massive star collapses; not even light escapes its event horizon.' },
  { id: 'd6', title: 'Coffee brewing', text: 'Espresso forces hot water through finely ground coffee beans under pressure.' },
  { id: 'd7', title: 'Honey bee colonies', text: 'Worker bees forage for nectar and pollen while the queen lays eggs in the hive.' },
  { id: 'd8', title: 'Plate tectonics', text: 'Continental plates drift slowly and collide, building mountains and causing earthquakes.' },
];

describe('Bm25Reference', () => {
  const bm25 = new Bm25Reference(corpus);

  it.each([
    ['how do plants turn sunlight into glucose?', 'd1'],
    ['pancreatic beta cells destroyed in diabetic patients', 'd3'],
    ['what happens when a massive star collapses', 'd5'],
  ])('ranks the obviously relevant doc first for %j', (query, expected) => {
    const ids = bm25.search(query);
    expect(ids[0]).toBe(expected);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stems both documents and queries', () => {
    expect(bm25Tokens('Eruptions ERUPTING')).toEqual(['erupt', 'erupt']);
    expect(bm25.search('erupting volcano', 3)[0]).toBe('d2');
  });

  it('returns [] for a query of only stop words, or no words at all', () => {
    expect(bm25Tokens('the of and is it what')).toEqual([]);
    expect(bm25.search('the of and is it what')).toEqual([]);
    expect(bm25.search('')).toEqual([]);
    expect(bm25.search('?!, ...')).toEqual([]);
  });

  it('returns [] for unknown terms and respects k', () => {
    expect(bm25.search('zzyzx quux')).toEqual([]);
    expect(bm25.search('water', 1)).toHaveLength(1);
    expect(bm25.search('water', 0)).toEqual([]);
  });

  it('works on corpora too small for the library to consolidate', () => {
    expect(new Bm25Reference([]).search('anything')).toEqual([]);
    const tiny = new Bm25Reference(corpus.slice(0, 2));
    expect(tiny.search('lava and magma')).toEqual(['d2']);
  });
});
