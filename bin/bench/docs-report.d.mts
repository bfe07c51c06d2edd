/** Types of `docs-report.mjs` for the TypeScript that imports it (the benchmarks and the docs checks). */
export function machine(): { date: string; node: string; cores: number };
export function thousands(n: number): string;
export function loadRange(values: readonly number[]): string;
export function renderHotPaths(report: unknown): string;
export function renderVectorPlan(report: unknown): string;
export function renderVerify(report: unknown): string;
export function renderSearchBaseline(report: unknown): string;
export function renderCollections(report: unknown): string;
export function renderSearchBundle(report: unknown): string;
export function renderLocalSearchHttp(report: unknown): string;
export function renderLocalSearchRestarts(report: unknown): string;
export function renderCliStart(report: unknown): string;
export const RECORDED: Record<string, { doc: string; sections: Record<string, (report: unknown) => string> }>;
/** Writes docs/bench/NAME.json and the sections rendered from it; returns the two paths written. */
export function recordInDocs(name: string, report: unknown): string[];
