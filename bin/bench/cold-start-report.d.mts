/** Types of `cold-start-report.mjs` for the TypeScript that imports it (the docs check). */
export function measureMemory(serveScript: string, dir: string, port: number, rounds: number, samples?: number): Promise<unknown>;
export function renderColdStartSection(report: unknown): string;
export function recordInDocs(root: string, report: unknown): void;
