/** Types of `readme-speed.mjs` for the TypeScript that imports it (the docs check). */
export const README_REPORTS: string[];
export function readReports(root?: string): Record<string, unknown>;
export function renderReadmeSpeed(reports: Record<string, unknown>): string;
export function recordReadmeSpeed(root?: string): void;
