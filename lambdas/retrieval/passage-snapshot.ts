/**
 * The dense side in memory, for a small store: every passage vector of one corpus
 * generation (`resident-keyword-index.ts` loads it beside the keyword copy), compared
 * with the query one by one, as the store's exact scan does (schema/013's
 * `chatctx_vector_search` at or below its exact bound).
 *
 * Why: with the keyword side in memory, the dense side was most of what a computed
 * answer still asked of the store's thread (the HNSW walk, then every passage of the
 * keyword hits it missed), about 4 ms of its 4 to 5. The starter corpus's 1,458
 * passages take 3 MiB here and under a millisecond to compare all of them. On a store
 * with more passages than `RESIDENT_PASSAGES` the store's index answers instead: a scan
 * grows with the store, the graph's walk does not.
 *
 * Same answers as the exact scan: pgvector's cosine distance is single-precision sums
 * over the dimensions in order, then one division in double; here the same sums are
 * taken with Math.fround in the same order (the vectors are read in binary, exactly),
 * so distances equal the store's to the last bit. Then the same steps: the nearest
 * `passages` visible passages (ties by record id), those of approved records of the
 * requested technologies, each record's best, `pool` records. Where the store would walk
 * its HNSW graph instead (a store above its exact bound), this is the exact answer the
 * walk approximates; test/integration/resident-keyword-index.test.ts compares the two
 * with the store held to its exact scan.
 */

/** Most passages held in memory; above it the store's index answers the dense side. */
export const RESIDENT_PASSAGES = 10_000;

export interface PassageSnapshotData {
  readonly dimensions: number;
  /** Record ids (uuid text); a record's number is its place here. */
  readonly records: readonly string[];
  /** Per record: 1 when approved. */
  readonly approved: Uint8Array;
  /** Records (numbers) per technology name, lower-cased (record_applies_to). */
  readonly appliesTo: ReadonlyMap<string, readonly number[]>;
  /** Per passage: its record's number (a record's passages lie together) and its collection. */
  readonly recordOf: Int32Array;
  readonly collection: Int32Array;
  /** Passage vectors, `dimensions` floats each, in passage order. */
  readonly vectors: Float32Array;
  /** Each passage's sum of squares (`squaredNorm`), computed as it was read. */
  readonly norms: Float32Array;
}

export interface DenseOptions {
  readonly collections: readonly number[];
  /** Technology names (any case); when set, only records that apply to one. */
  readonly technologies?: readonly string[];
  /** Nearest passages read (several can be one record's). */
  readonly passages: number;
  /** Most records returned. */
  readonly pool: number;
  /** Keyword hits whose best-passage similarity is wanted when the nearest passages missed them. */
  readonly keywordIds: readonly string[];
}

/** Fresh for each search: the caller may keep and sort them. */
export interface DenseResult {
  readonly dense: { readonly id: string; readonly similarity: number }[];
  readonly similarities: Map<string, number>;
}

const f = Math.fround;

/** pgvector's sum of squares of a vector: single precision, dimensions in order. */
export function squaredNorm(v: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum = f(sum + f(v[i]! * v[i]!));
  return sum;
}

/** Postgres orders NaN above every number. */
const ascending = (a: number, b: number) => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : Number.isNaN(b) ? -1 : a - b);

export class PassageSnapshot {
  private readonly numberOf: ReadonlyMap<string, number>;
  /** Each record's passages: from `first[record]` up to `first[record + 1]`. */
  private readonly first: Int32Array;
  /** Scratch: each passage's distance, reused by every search (they run one at a time on the event loop). */
  private readonly distance: Float64Array;

  constructor(readonly data: PassageSnapshotData) {
    const count = data.recordOf.length;
    this.numberOf = new Map(data.records.map((id, i) => [id, i]));
    this.distance = new Float64Array(count);
    this.first = new Int32Array(data.records.length + 1).fill(count);
    for (let p = count - 1; p >= 0; p--) this.first[data.recordOf[p]!] = p;
    for (let r = data.records.length - 1; r >= 0; r--) this.first[r] = Math.min(this.first[r]!, this.first[r + 1]!);
  }

  get passages(): number {
    return this.data.recordOf.length;
  }

  search(query: Float32Array, options: DenseOptions): DenseResult {
    this.distances(query);
    const nearest = this.nearest(new Set(options.collections), options.passages);
    const eligible = this.eligible(options.technologies);
    const best = new Map<number, number>();
    for (const p of nearest) {
      const record = this.data.recordOf[p]!;
      if (!this.data.approved[record] || (eligible && !eligible.has(record))) continue;
      const similarity = 1 - this.distance[p]!;
      const known = best.get(record);
      if (known === undefined || ascending(known, similarity) < 0) best.set(record, similarity);
    }
    const dense = [...best]
      .map(([record, similarity]) => ({ id: this.data.records[record]!, similarity }))
      .sort((a, b) => ascending(b.similarity, a.similarity) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, options.pool);
    const found = new Set(dense.map((d) => d.id));
    const similarities = new Map<string, number>();
    for (const id of options.keywordIds) {
      if (found.has(id)) continue;
      const similarity = this.bestOf(id);
      if (similarity !== undefined) similarities.set(id, similarity);
    }
    return { dense, similarities };
  }

  /**
   * Every passage's cosine distance to `query`, as pgvector computes it. Four passages at a
   * time: each sum is still taken in order, but four independent sums keep the processor busy
   * where one would wait on each addition (about three times faster, measured).
   */
  private distances(query: Float32Array): void {
    const { vectors, dimensions } = this.data;
    const queryNorm = squaredNorm(query);
    const count = this.passages;
    let p = 0;
    for (; p + 4 <= count; p += 4) {
      const a = p * dimensions;
      const b = a + dimensions;
      const c = b + dimensions;
      const d = c + dimensions;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < dimensions; i++) {
        const q = query[i]!;
        s0 = f(s0 + f(q * vectors[a + i]!));
        s1 = f(s1 + f(q * vectors[b + i]!));
        s2 = f(s2 + f(q * vectors[c + i]!));
        s3 = f(s3 + f(q * vectors[d + i]!));
      }
      this.setDistance(p, s0, queryNorm);
      this.setDistance(p + 1, s1, queryNorm);
      this.setDistance(p + 2, s2, queryNorm);
      this.setDistance(p + 3, s3, queryNorm);
    }
    for (; p < count; p++) {
      const at = p * dimensions;
      let s = 0;
      for (let i = 0; i < dimensions; i++) s = f(s + f(query[i]! * vectors[at + i]!));
      this.setDistance(p, s, queryNorm);
    }
  }

  /** pgvector's `<=>`: the dot product over the norms' product in double, kept within -1..1, from 1. */
  private setDistance(p: number, dot: number, queryNorm: number): void {
    let similarity = dot / Math.sqrt(queryNorm * this.data.norms[p]!);
    if (similarity > 1) similarity = 1;
    else if (similarity < -1) similarity = -1;
    this.distance[p] = 1 - similarity;
  }

  /** The `limit` nearest passages in `visible` collections, by distance and then record id (the exact scan's ORDER BY). */
  private nearest(visible: ReadonlySet<number>, limit: number): number[] {
    const kept: number[] = [];
    const before = (p: number, q: number) =>
      ascending(this.distance[p]!, this.distance[q]!) || byId(this.data.records[this.data.recordOf[p]!]!, this.data.records[this.data.recordOf[q]!]!);
    for (let p = 0; p < this.passages; p++) {
      if (!visible.has(this.data.collection[p]!)) continue;
      if (kept.length === limit && before(kept[limit - 1]!, p) <= 0) continue;
      let at = kept.length === limit ? limit - 1 : kept.length;
      while (at > 0 && before(p, kept[at - 1]!) < 0) {
        kept[at] = kept[at - 1]!;
        at--;
      }
      kept[at] = p;
      if (kept.length > limit) kept.length = limit;
    }
    return kept;
  }

  /** The records that apply to one of `technologies`; undefined when there is no filter. */
  private eligible(technologies: readonly string[] | undefined): Set<number> | undefined {
    if (!technologies || technologies.length === 0) return undefined;
    const records = new Set<number>();
    for (const name of technologies) for (const record of this.data.appliesTo.get(name.toLowerCase()) ?? []) records.add(record);
    return records;
  }

  /** A record's best-passage similarity over all its passages, as the statement's max(); undefined without passages. */
  private bestOf(id: string): number | undefined {
    const record = this.numberOf.get(id);
    if (record === undefined) return undefined;
    let best: number | undefined;
    for (let p = this.first[record]!; p < this.first[record + 1]!; p++) {
      const similarity = 1 - this.distance[p]!;
      if (best === undefined || ascending(best, similarity) < 0) best = similarity;
    }
    return best;
  }
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
