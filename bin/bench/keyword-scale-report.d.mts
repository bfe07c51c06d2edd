/** Types of `keyword-scale-report.mjs` for the TypeScript that imports it. */
export interface KeywordRound {
  before_p50_ms: number;
  before_p95_ms: number;
  after_p50_ms: number;
  after_p95_ms: number;
  same_answers: number;
  /** The local server's way (absent from reports recorded before it existed). */
  resident_p50_ms?: number;
  resident_p95_ms?: number;
  resident_same_answers?: number;
  candidates_resident?: number;
  questions: number;
  postings_per_question: number;
  candidates_before: number;
  candidates_after: number;
  load_average_1m: number;
}
export interface KeywordScaleRun {
  quick: boolean;
  date: string;
  node: string;
  cores: number;
  source: string;
  pool: number;
  /** resident_load_ms: how long the copy in memory took to load at this size. */
  sizes: { records: number; rounds: KeywordRound[]; resident_load_ms?: number }[];
}
export function aggregateKeywordScale(run: KeywordScaleRun): KeywordScaleRun & { rounds: number; summary: { sizes: Record<string, unknown>[]; growth: Record<string, number>[] } };
export function renderKeywordScaleSection(report: unknown): string;
