/**
 * The keyword side scored in memory: a copy of the BM25 side tables of one corpus
 * generation (`resident-keyword-index.ts` loads and replaces it), searched with the
 * arithmetic of the store's statement (schema/012_collections.sql's
 * `chatctx_keyword_search`, every record holding a query word scored).
 *
 * Why: on PGlite a posting costs about 1.7 microseconds to read and group inside a
 * statement, so the keyword side grew with the store (20,000 SciFact records took
 * 2.3 times as long as 5,000 even with 015's pruning, and it was the largest part of a
 * computed answer). Here a posting costs a few nanoseconds, so scoring every one is
 * cheaper than any bound, and the count of candidates is the exact one again.
 *
 * Same answers: the same statistics (N, average length and document frequencies summed
 * over the caller's collections), the same operations in the same order, the float4
 * `tf` and `doc_len` read exactly, and the sums taken in lexeme order as 015's are.
 * The one difference is the logarithm (JavaScript's against the database's), which can
 * differ in the last bit; test/integration/resident-keyword-index.test.ts compares the
 * two paths' records, order, matched words and scores.
 */

import type { PassageSnapshot } from './passage-snapshot.ts';

/** One word's postings, record numbers ascending (the binary search in `matched` relies on it). */
export interface Postings {
  readonly records: Int32Array;
  readonly tf: Float64Array;
}

export interface KeywordSnapshotData {
  readonly generation: number;
  /** Record ids (uuid text) in the order loaded; a record's number is its place here. */
  readonly ids: readonly string[];
  readonly collection: Int32Array;
  readonly docLen: Float64Array;
  readonly postings: ReadonlyMap<string, Postings>;
  /** Records (numbers) per technology name, lower-cased (record_applies_to). */
  readonly appliesTo: ReadonlyMap<string, readonly number[]>;
  /** Per record: its phrasings' lexemes and IDF masses (record_phrase_terms, record_phrase_mass). */
  readonly phrases: ReadonlyMap<number, readonly { readonly lexemes: ReadonlySet<string>; readonly mass: number }[]>;
  readonly collectionStats: ReadonlyMap<number, { readonly n: number; readonly totalLen: number }>;
  /** Document frequency per word and collection (what collection_term_stats holds, counted from the postings). */
  readonly df: ReadonlyMap<string, ReadonlyMap<number, number>>;
}

export interface ResidentQuery {
  /** The question's distinct lexemes (to_tsvector('english', …)). */
  readonly lexemes: readonly string[];
  /** Each group's weight and lexemes, in the order given. */
  readonly groups: readonly { readonly weight: number; readonly lexemes: readonly string[] }[];
}

export interface ResidentOptions {
  readonly collections: readonly number[];
  /** Technology names (any case); when set, only records that apply to one. */
  readonly technologies?: readonly string[];
  readonly limit: number;
  readonly k1: number;
  readonly b: number;
}

export interface ResidentHit {
  readonly id: string;
  readonly score: number;
  readonly matched: readonly string[];
  readonly phrase: number;
}

export interface ResidentResult {
  readonly hits: readonly ResidentHit[];
  /** [lexeme, idf, df], lexemes ascending. */
  readonly lexemes: readonly (readonly [string, number, number])[];
  readonly groups: readonly (readonly string[])[];
  readonly candidates: number;
  readonly n: number;
}

interface Term {
  readonly lexeme: string;
  readonly weight: number;
  readonly idf: number;
  readonly df: number;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class KeywordSnapshot {
  /** Scratch space reused by every search (searches run one at a time on the event loop). */
  private readonly scores: Float64Array;
  private readonly positive: Uint8Array;
  private readonly seen: Uint8Array;
  private norms: { avgdl: number; k1: number; b: number; values: Float64Array } | undefined;
  /** The collections the records belong to. */
  private readonly present: ReadonlySet<number>;

  /**
   * @param passages the same generation's passage vectors, on a store small enough to hold
   * them (passage-snapshot.ts); without them the store's index answers the dense side.
   */
  constructor(readonly data: KeywordSnapshotData, readonly passages?: PassageSnapshot) {
    this.scores = new Float64Array(data.ids.length);
    this.positive = new Uint8Array(data.ids.length);
    this.seen = new Uint8Array(data.ids.length);
    this.present = new Set(data.collection);
  }

  get generation(): number {
    return this.data.generation;
  }

  search(query: ResidentQuery, options: ResidentOptions): ResidentResult {
    const visible = new Set(options.collections);
    const stats = this.statistics(visible);
    const terms = this.terms(query, visible, stats.n);
    const touched = this.score(terms, this.eligible(visible, options.technologies), stats.avgdl, options);
    try {
      const { top, candidates } = this.top(touched, options.limit);
      const own = this.ownIdf(terms);
      return {
        hits: top.map((r) => ({ id: this.data.ids[r]!, score: this.scores[r]!, matched: this.matched(r, terms), phrase: this.phraseShare(r, terms, own) })),
        lexemes: terms.map((t) => [t.lexeme, t.idf, t.df] as const),
        groups: query.groups.map((g) => [...g.lexemes].sort(byCodeUnit)),
        candidates,
        n: stats.n,
      };
    } finally {
      this.clear(touched);
    }
  }

  private clear(touched: readonly number[] | undefined): void {
    // Clearing whole arrays is a memset; past a sixteenth of the records it beats visiting them.
    if (!touched || touched.length * 16 > this.scores.length) {
      this.scores.fill(0);
      this.positive.fill(0);
      this.seen.fill(0);
      return;
    }
    for (const r of touched) {
      this.scores[r] = 0;
      this.positive[r] = 0;
      this.seen[r] = 0;
    }
  }

  /**
   * Each record's length term, k1 * (1 - b + b * doc_len / avgdl), computed as the statement
   * computes it; kept for the last average length asked (one per set of collections).
   */
  private lengthTerms(avgdl: number, k1: number, b: number): Float64Array {
    const kept = this.norms;
    if (kept && kept.avgdl === avgdl && kept.k1 === k1 && kept.b === b) return kept.values;
    const docLen = this.data.docLen;
    const values = new Float64Array(docLen.length);
    for (let r = 0; r < docLen.length; r++) values[r] = k1 * (1 - b + (b * docLen[r]!) / avgdl);
    this.norms = { avgdl, k1, b, values };
    return values;
  }

  /** N and the average length over the caller's collections. */
  private statistics(visible: ReadonlySet<number>): { n: number; avgdl: number } {
    let n = 0;
    let total = 0;
    for (const c of visible) {
      const s = this.data.collectionStats.get(c);
      if (s) {
        n += s.n;
        total += s.totalLen;
      }
    }
    return { n, avgdl: n > 0 ? total / n : 1 };
  }

  /** Each lexeme's weight (the lowest of the groups holding it, else 1), summed df and IDF, lexemes ascending. */
  private terms(query: ResidentQuery, visible: ReadonlySet<number>, n: number): Term[] {
    const weights = new Map<string, number>();
    for (const g of query.groups) {
      for (const l of g.lexemes) weights.set(l, Math.min(weights.get(l) ?? Infinity, g.weight));
    }
    return [...new Set(query.lexemes)].sort(byCodeUnit).map((lexeme) => {
      let df = 0;
      for (const [c, d] of this.data.df.get(lexeme) ?? []) if (visible.has(c)) df += d;
      return { lexeme, weight: weights.get(lexeme) ?? 1, df, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) };
    });
  }

  /**
   * Adds every visible posting's BM25 part, in lexeme order. Returns the records touched, or
   * undefined when the question's postings outnumber the records: then every record is
   * looked at afterwards instead (a linear pass over a few arrays costs less than noting
   * each record the first time a posting reaches it).
   */
  private score(terms: readonly Term[], eligible: Uint8Array | undefined, avgdl: number, o: ResidentOptions): number[] | undefined {
    const norm = this.lengthTerms(avgdl, o.k1, o.b);
    const { scores, seen, positive } = this;
    const lists = terms.map((t) => this.data.postings.get(t.lexeme));
    const total = lists.reduce((sum, p) => sum + (p?.records.length ?? 0), 0);
    const touched: number[] | undefined = total > this.data.ids.length ? undefined : [];
    const k1 = o.k1;
    terms.forEach((t, ti) => {
      const p = lists[ti];
      if (!p) return;
      const wi = t.weight * t.idf;
      const mark = t.weight > 0 ? 1 : 0;
      const records = p.records;
      const tfs = p.tf;
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        if (eligible !== undefined && eligible[r] !== 1) continue;
        const tf = tfs[i]!;
        // The statement's expression, operation for operation (float8 throughout).
        scores[r] = scores[r]! + (wi * tf * (k1 + 1)) / (tf + norm[r]!);
        positive[r] = positive[r]! | mark;
        if (touched !== undefined && seen[r] === 0) {
          seen[r] = 1;
          touched.push(r);
        }
      }
    });
    return touched;
  }

  /** Records of the caller's collections that the technology filter lets through; undefined when that is every record. */
  private eligible(visible: ReadonlySet<number>, technologies: readonly string[] | undefined): Uint8Array | undefined {
    const everyCollection = [...this.present].every((c) => visible.has(c));
    if (everyCollection && !technologies) return undefined;
    const eligible = new Uint8Array(this.data.ids.length);
    if (technologies) {
      for (const t of technologies) for (const r of this.data.appliesTo.get(t.toLowerCase()) ?? []) eligible[r] = 1;
    } else eligible.fill(1);
    if (!everyCollection) {
      const collection = this.data.collection;
      for (let r = 0; r < collection.length; r++) if (!visible.has(collection[r]!)) eligible[r] = 0;
    }
    return eligible;
  }

  /** The best `limit` records holding a positively weighted word (score descending, then id), and how many hold one. */
  private top(touched: readonly number[] | undefined, limit: number): { top: number[]; candidates: number } {
    const { ids } = this.data;
    const { scores, positive } = this;
    const better = (a: number, b: number) => scores[b]! - scores[a]! || byCodeUnit(ids[a]!, ids[b]!);
    const best: number[] = [];
    let floor = -Infinity; // the worst kept score once `limit` are kept
    const count = touched ? touched.length : ids.length;
    let candidates = 0;
    for (let k = 0; k < count; k++) {
      const r = touched ? touched[k]! : k;
      if (positive[r] !== 1) continue;
      candidates++;
      if (scores[r]! < floor) continue;
      if (best.length === limit && better(r, best[limit - 1]!) >= 0) continue;
      let i = best.length === limit ? limit - 1 : best.length;
      while (i > 0 && better(r, best[i - 1]!) < 0) {
        best[i] = best[i - 1]!;
        i--;
      }
      best[i] = r;
      if (best.length === limit) floor = scores[best[limit - 1]!]!;
    }
    return { top: best, candidates };
  }

  /** The query lexemes a record holds, ascending (a binary search in each word's postings). */
  private matched(r: number, terms: readonly Term[]): string[] {
    return terms.filter((t) => {
      const list = this.data.postings.get(t.lexeme)?.records;
      if (!list) return false;
      let lo = 0;
      let hi = list.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (list[mid] === r) return true;
        if (list[mid]! < r) lo = mid + 1;
        else hi = mid - 1;
      }
      return false;
    }).map((t) => t.lexeme);
  }

  /**
   * The largest share of one of the record's phrasings the question holds, by IDF mass,
   * with IDFs from the record's own collection's statistics (as the statement's `own`).
   */
  private phraseShare(r: number, terms: readonly Term[], own: (c: number) => ReadonlyMap<string, number>): number {
    const idf = own(this.data.collection[r]!);
    let best: number | undefined;
    for (const phrase of this.data.phrases.get(r) ?? []) {
      if (phrase.mass === 0) continue; // the statement's nullif(mass, 0)
      let said = 0;
      let any = false;
      for (const t of terms) {
        const value = idf.get(t.lexeme);
        if (value === undefined || !phrase.lexemes.has(t.lexeme)) continue;
        said += value;
        any = true;
      }
      if (!any) continue;
      const share = said / phrase.mass;
      if (best === undefined || share > best) best = share;
    }
    return best ?? 0;
  }

  /** Per collection, the IDF of each query word it holds, from that collection's statistics alone (memoized per search). */
  private ownIdf(terms: readonly Term[]): (c: number) => ReadonlyMap<string, number> {
    const memo = new Map<number, Map<string, number>>();
    return (c) => {
      let m = memo.get(c);
      if (!m) {
        const n = this.data.collectionStats.get(c)?.n ?? 0;
        m = new Map();
        for (const t of terms) {
          const df = this.data.df.get(t.lexeme)?.get(c);
          if (df !== undefined) m.set(t.lexeme, Math.log(1 + (n - df + 0.5) / (df + 0.5)));
        }
        memo.set(c, m);
      }
      return m;
    };
  }
}
