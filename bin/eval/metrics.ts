/**
 * Retrieval metrics with the standard trec_eval / BEIR (pytrec_eval) definitions.
 *
 * Conventions shared by every metric here:
 *   - `ranked` is a ranked list of doc ids, best first. Only its first k entries count.
 *     A doc id repeated in `ranked` counts once, at its first position (a TREC run cannot
 *     hold the same doc twice for one query).
 *   - `relevant` maps doc id → graded qrels score. A doc is relevant when its score is > 0;
 *     scores ≤ 0 (judged non-relevant) contribute no gain.
 *   - A query without any relevant doc scores 0 on every metric (trec_eval behaviour).
 */

export type Qrels = Map<string, Map<string, number>>;

export interface RunMetrics {
  ndcg_at_10: number;
  recall_at_10: number;
  recall_at_100: number;
  mrr_at_10: number;
}

function gainOf(relevant: Map<string, number>, docId: string): number {
  const score = relevant.get(docId);
  return score !== undefined && score > 0 ? score : 0;
}

/** The first k distinct ids of `ranked`. */
function topK(k: number, ranked: readonly string[]): string[] {
  const out: string[] = [];
  if (!(k > 0)) return out;
  const seen = new Set<string>();
  for (const id of ranked) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
    if (out.length >= k) break;
  }
  return out;
}

function countRelevant(relevant: Map<string, number>): number {
  let n = 0;
  for (const score of relevant.values()) if (score > 0) n += 1;
  return n;
}

/**
 * nDCG@k: DCG = Σ_{i<k} gain(ranked[i]) / log2(i + 2) with gain = the graded qrels score
 * (linear gain, as trec_eval's ndcg_cut and pytrec_eval), divided by the ideal DCG of the
 * qrels scores sorted descending and cut at k. 0 when there is no relevant doc.
 */
export function ndcgAt(k: number, ranked: readonly string[], relevant: Map<string, number>): number {
  const top = topK(k, ranked);
  let dcg = 0;
  top.forEach((id, i) => {
    const gain = gainOf(relevant, id);
    if (gain > 0) dcg += gain / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()]
    .filter((s) => s > 0)
    .sort((a, b) => b - a)
    .slice(0, Math.max(0, Math.floor(k)));
  let idcg = 0;
  ideal.forEach((gain, i) => {
    idcg += gain / Math.log2(i + 2);
  });
  return idcg > 0 ? dcg / idcg : 0;
}

/** Recall@k: relevant (score > 0) docs found in the top k / all relevant (score > 0) docs. */
export function recallAt(k: number, ranked: readonly string[], relevant: Map<string, number>): number {
  const total = countRelevant(relevant);
  if (total === 0) return 0;
  let found = 0;
  for (const id of topK(k, ranked)) if (gainOf(relevant, id) > 0) found += 1;
  return found / total;
}

/** MRR@k: 1 / (1-based rank of the first relevant doc within the top k), else 0. */
export function mrrAt(k: number, ranked: readonly string[], relevant: Map<string, number>): number {
  const top = topK(k, ranked);
  for (let i = 0; i < top.length; i += 1) {
    if (gainOf(relevant, top[i]!) > 0) return 1 / (i + 1);
  }
  return 0;
}

/**
 * Averages nDCG@10, Recall@10, Recall@100 and MRR@10 over the queries that have qrels
 * (a non-empty judgment map). A query absent from `run`, or with an empty result list,
 * counts as 0 (like `trec_eval -c`; note pytrec_eval/BEIR would silently drop it).
 * `queryIds` optionally restricts the average to a subset (e.g. one half of splitByQueryId);
 * ids in it without qrels are ignored. With no evaluable query every metric is 0.
 */
export function evaluateRun(
  run: Map<string, readonly string[]>,
  qrels: Qrels,
  queryIds?: Iterable<string>,
): RunMetrics {
  const ids = queryIds ? [...new Set(queryIds)] : [...qrels.keys()];
  const totals: RunMetrics = { ndcg_at_10: 0, recall_at_10: 0, recall_at_100: 0, mrr_at_10: 0 };
  let n = 0;
  for (const qid of ids) {
    const relevant = qrels.get(qid);
    if (!relevant || relevant.size === 0) continue;
    n += 1;
    const ranked = run.get(qid) ?? [];
    totals.ndcg_at_10 += ndcgAt(10, ranked, relevant);
    totals.recall_at_10 += recallAt(10, ranked, relevant);
    totals.recall_at_100 += recallAt(100, ranked, relevant);
    totals.mrr_at_10 += mrrAt(10, ranked, relevant);
  }
  if (n === 0) return totals;
  return {
    ndcg_at_10: totals.ndcg_at_10 / n,
    recall_at_10: totals.recall_at_10 / n,
    recall_at_100: totals.recall_at_100 / n,
    mrr_at_10: totals.mrr_at_10 / n,
  };
}

/**
 * The p-th percentile (p in [0, 100]) by linear interpolation between closest ranks
 * (numpy's default "linear" method, Hyndman & Fan type 7): with the values sorted ascending
 * as v[0..n-1], h = (n - 1)·p/100 and the result is v[⌊h⌋] + (h − ⌊h⌋)·(v[⌊h⌋+1] − v[⌊h⌋]).
 * So p=0 is the min, p=100 the max, p=50 the usual median. NaN for an empty input.
 */
export function percentile(values: readonly number[], p: number): number {
  if (!Number.isFinite(p) || p < 0 || p > 100) throw new RangeError(`percentile: p must be in [0, 100], got ${p}`);
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const h = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** 32-bit FNV-1a over the UTF-8 bytes of `s`. */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(s)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** MurmurHash3's fmix32 finalizer: spreads every input bit over every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Fixed, deterministic half split of query ids into a "tune" half (for choosing parameters)
 * and a held-out "test" half (for reporting), independent of file order and of the run:
 *
 *   h = fmix32(FNV-1a-32(UTF-8 bytes of salt + id));  even h → "tune", odd h → "test".
 *
 * The fmix32 finalizer matters: the lowest bit of a raw FNV-1a hash is just the parity of the
 * number of odd bytes in the input (the FNV prime and offset basis are odd), so for numeric ids
 * it would split on "how many odd digits", not at random. Input order is kept within each half;
 * duplicate ids are kept once. The default empty salt is the canonical split; a different salt
 * gives another, equally deterministic split.
 */
export function splitByQueryId(ids: Iterable<string>, salt = ''): { tune: string[]; test: string[] } {
  const tune: string[] = [];
  const test: string[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    if ((fmix32(fnv1a32(salt + id)) & 1) === 0) tune.push(id);
    else test.push(id);
  }
  return { tune, test };
}
