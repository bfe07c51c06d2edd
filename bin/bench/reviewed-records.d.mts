/** Types of `reviewed-records.mjs` for the TypeScript that imports it (the tests' fixtures). */
export interface RecordWording {
  readonly slug: string;
  readonly title: string;
  readonly summary: string;
  readonly asked_as: string[];
  readonly recommendation: string;
}

export function validRecord(wording: RecordWording): Record<string, unknown>;

export function reviewedRecords(count: number, prefix: string): Record<string, unknown>[];
