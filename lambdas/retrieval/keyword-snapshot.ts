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

/** One word's postings, records in ascending id order. */
export interface Postings {
  readonly records: Int32Array;
  readonly tf: Float64Array;
}

export interface KeywordSnapshotData {
  readonly generation: number;
  /** Record ids (uuid text), ascending; a record's number is its place here. */
  readonly ids: readonly string[];
  readonly collection: Int32Array;
  readonly docLen: Float64Array;
  readonly postings: ReadonlyMap<string, Postings>;
  /** Records (numbers) per technology name, lower-cased (record_applies_to). */
  readonly appliesTo: ReadonlyMap<string, readonly number[]>;
  /** Per record: its phrasings' lexemes and IDF masses (record_phrase_terms, record_phrase_mass). */
  readonly phrases: ReadonlyMap<number, readonly { readonly lexemes: ReadonlySet<string>; readonly mass: number | null }[]>;
  readonly collectionStats: ReadonlyMap<number, { readonly n: number; readonly totalLen: number }>;
  /** Document frequency per word and collection (collection_term_stats). */
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
  /** Lower-cased technology names; when set, only records that apply to one. */
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

  constructor(readonly data: KeywordSnapshotData) {
    this.scores = new Float64Array(data.ids.length);
    this.positive = new Uint8Array(data.ids.length);
    this.seen = new Uint8Array(data.ids.length);
  }

  get generation(): number {
    return this.data.generation;
  }

  search(query: ResidentQuery, options: ResidentOptions): ResidentResult {
    const visible = new Set(options.collections);
    const stats = this.statistics(visible);
    const terms = this.terms(query, visible, stats.n);
    const allowed = this.allowed(options.technologies);
    const touched = this.score(terms, visible, allowed, stats.avgdl, options);
    try {
      let candidates = 0;
      for (const r of touched) if (this.positive[r]) candidates++;
      const top = this.top(touched, options.limit);
      return {
        hits: top.map((r) => ({ id: this.data.ids[r]!, score: this.scores[r]!, matched: this.matched(r, terms), phrase: this.phraseShare(r, terms) })),
        lexemes: terms.map((t) => [t.lexeme, t.idf, t.df] as const),
        groups: query.groups.map((g) => [...g.lexemes].sort(byCodeUnit)),
        candidates,
        n: stats.n,
      };
    } finally {
      for (const r of touched) {
        this.scores[r] = 0;
        this.positive[r] = 0;
        this.seen[r] = 0;
      }
    }
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

  /** The records a technology filter lets through (undefined: no filter). */
  private allowed(technologies: readonly string[] | undefined): Uint8Array | undefined {
    if (!technologies) return undefined;
    const allowed = new Uint8Array(this.data.ids.length);
    for (const t of technologies) for (const r of this.data.appliesTo.get(t.toLowerCase()) ?? []) allowed[r] = 1;
    return allowed;
  }

  /** Adds every visible posting's BM25 part, in lexeme order; returns the records touched. */
  private score(terms: readonly Term[], visible: ReadonlySet<number>, allowed: Uint8Array | undefined, avgdl: number, o: ResidentOptions): number[] {
    const touched: number[] = [];
    const { collection, docLen } = this.data;
    for (const t of terms) {
      const p = this.data.postings.get(t.lexeme);
      if (!p) continue;
      const wi = t.weight * t.idf;
      for (let i = 0; i < p.records.length; i++) {
        const r = p.records[i]!;
        if (!visible.has(collection[r]!) || (allowed && !allowed[r])) continue;
        const tf = p.tf[i]!;
        // The statement's expression, operation for operation (float8 throughout).
        const part = (wi * tf * (o.k1 + 1)) / (tf + o.k1 * (1 - o.b + (o.b * docLen[r]!) / avgdl));
        if (!this.seen[r]) {
          this.seen[r] = 1;
          touched.push(r);
        }
        this.scores[r] = this.scores[r]! + part;
        if (t.weight > 0) this.positive[r] = 1;
      }
    }
    return touched;
  }

  /** The best `limit` records holding a positively weighted word: score descending, then id. */
  private top(touched: readonly number[], limit: number): number[] {
    const ids = this.data.ids;
    const better = (a: number, b: number) => this.scores[b]! - this.scores[a]! || byCodeUnit(ids[a]!, ids[b]!);
    const best: number[] = [];
    for (const r of touched) {
      if (!this.positive[r]) continue;
      if (best.length === limit && better(r, best[limit - 1]!) >= 0) continue;
      let i = best.length === limit ? limit - 1 : best.length;
      while (i > 0 && better(r, best[i - 1]!) < 0) {
        best[i] = best[i - 1]!;
        i--;
      }
      best[i] = r;
    }
    return best;
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
  private phraseShare(r: number, terms: readonly Term[]): number {
    const c = this.data.collection[r]!;
    const n = this.data.collectionStats.get(c)?.n ?? 0;
    let best: number | undefined;
    for (const phrase of this.data.phrases.get(r) ?? []) {
      if (phrase.mass === null) continue;
      let said = 0;
      let any = false;
      for (const t of terms) {
        const df = this.data.df.get(t.lexeme)?.get(c);
        if (df === undefined || !phrase.lexemes.has(t.lexeme)) continue;
        said += Math.log(1 + (n - df + 0.5) / (df + 0.5));
        any = true;
      }
      if (!any || phrase.mass === 0) continue;
      const share = said / phrase.mass;
      if (best === undefined || share > best) best = share;
    }
    return best ?? 0;
  }
}
