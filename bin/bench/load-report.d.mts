/** Types of `load-report.mjs` for the TypeScript that imports it (the docs check). */
export function median(values: number[]): number | null;
export function percentile(values: number[], p: number): number;
export function renderLoadSection(report: unknown): string;
export function replaceSection(doc: string, name: string, body: string): string;
export function section(doc: string, name: string): string | undefined;
