/**
 * Independent BM25 reference line for the evaluation table, built on wink-bm25-text-search
 * (an in-memory BM25F engine) rather than on our own retrieval code.
 *
 * Configuration (mirrors Anserini's BEIR "flat" BM25 as closely as the library allows):
 *   - fields title and body, both weight 1 (with equal weights BM25F = BM25 over title + text)
 *   - k1 = 0.9, b = 0.4, k = 1 (idf = ln(1 + (N − n + 0.5) / (n + 0.5)), Lucene's BM25 idf)
 *   - prep, identical for documents and queries (wink-nlp-utils): lowercase → tokenize0
 *     (split on non-word characters, elisions removed, "n't" → "not") → remove wink's default
 *     stop words → Porter2 stemming.
 * Duplicate query terms add up (a term said twice counts twice), as in a Lucene bag-of-words query.
 */
import { createRequire } from 'node:module';
import type { BeirDoc } from './beir.ts';

type PrepTask = (input: any) => any;

interface WinkBm25 {
  defineConfig(config: {
    fldWeights: Record<string, number>;
    bm25Params?: { k1?: number; b?: number; k?: number };
    ovFldNames?: string[];
  }): boolean;
  definePrepTasks(tasks: PrepTask[], field?: string): number;
  addDoc(doc: Record<string, string>, uniqueId: string): number;
  consolidate(fp?: number): boolean;
  search(text: string, limit?: number): Array<[string, number]>;
  getTotalDocs(): number;
}

interface WinkNlpUtils {
  string: { lowerCase(s: string): string; tokenize0(s: string): string[] };
  tokens: { removeWords(tokens: string[]): string[]; stem(tokens: string[]): string[] };
}

const require = createRequire(import.meta.url);
const winkBm25 = require('wink-bm25-text-search') as () => WinkBm25;
const nlp = require('wink-nlp-utils') as WinkNlpUtils;

/** wink-bm25-text-search refuses to consolidate fewer docs than this. */
const MIN_DOCS = 3;
/** Id prefix of the empty filler docs added to corpora smaller than MIN_DOCS. */
const FILLER_PREFIX = '\u0000bm25-reference-filler:';

export interface Bm25ReferenceOptions {
  k1?: number;
  b?: number;
}

/** The token pipeline used for both documents and queries. */
export function bm25Tokens(text: string): string[] {
  const tokens = nlp.tokens.stem(nlp.tokens.removeWords(nlp.string.tokenize0(nlp.string.lowerCase(text))));
  return tokens.filter((t) => t.length > 0);
}

export class Bm25Reference {
  private readonly engine: WinkBm25 | null;
  /** Number of real (non-filler) documents indexed. */
  readonly size: number;

  constructor(corpus: Iterable<BeirDoc>, options: Bm25ReferenceOptions = {}) {
    const docs = [...corpus];
    this.size = docs.length;
    if (docs.length === 0) {
      this.engine = null;
      return;
    }
    const engine = winkBm25();
    engine.defineConfig({
      fldWeights: { title: 1, body: 1 },
      bm25Params: { k1: options.k1 ?? 0.9, b: options.b ?? 0.4, k: 1 },
    });
    engine.definePrepTasks([bm25Tokens]);
    const seen = new Set<string>();
    for (const doc of docs) {
      if (seen.has(doc.id)) throw new Error(`Bm25Reference: duplicate document id ${JSON.stringify(doc.id)}`);
      seen.add(doc.id);
      engine.addDoc({ title: doc.title ?? '', body: doc.text ?? '' }, doc.id);
    }
    // Tiny corpora: pad with empty docs so the library can consolidate. They hold no terms,
    // so they never match; they only nudge N and the average length (rankings stay sensible).
    for (let i = 0; docs.length + i < MIN_DOCS; i += 1) {
      engine.addDoc({ title: '', body: '' }, `${FILLER_PREFIX}${i}`);
    }
    // 9 decimals (the library's maximum) for per-term weights, so fewer artificial score ties.
    engine.consolidate(9);
    this.engine = engine;
  }

  /**
   * Up to k doc ids, best first. Returns [] for k ≤ 0, an empty corpus, or a query that has
   * no indexed term left after prep (e.g. only stop words). Ties keep the library's order.
   */
  search(query: string, k = 100): string[] {
    if (!this.engine || !(k >= 1) || typeof query !== 'string') return [];
    if (bm25Tokens(query).length === 0) return [];
    let hits: Array<[string, number]>;
    try {
      // wink treats a falsy limit as 10; k ≥ 1 here. Ask for a little extra in case fillers match.
      hits = this.engine.search(query, Math.floor(k) + MIN_DOCS);
    } catch {
      return [];
    }
    const ids: string[] = [];
    for (const [id] of hits) {
      if (id.startsWith(FILLER_PREFIX)) continue;
      ids.push(String(id));
      if (ids.length >= k) break;
    }
    return ids;
  }
}
