/**
 * The row values every `Sql` adapter returns (see `ports/sql.ts`), made uniform
 * here so record, key and feedback code never decode per adapter:
 * - timestamps become ISO-8601 UTC strings with milliseconds, whether the driver
 *   gave a `Date` (PGlite) or `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC (the Data API);
 * - the columns a query names as JSON are parsed when they arrive as text (the
 *   Data API sends json/jsonb as text).
 * Rows are rewritten in place; they are fresh objects from the driver.
 */
import type { QueryOptions } from '../ports/sql.ts';

/** What the Data API sends for timestamp/timestamptz in JSON results (UTC, no zone). */
const DATA_API_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)$/;

/** ISO-8601 UTC with milliseconds from a `Date`; from the Data API's zone-less UTC text. */
function timestampOf(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'string') return undefined;
  const match = DATA_API_TIMESTAMP.exec(value);
  // Milliseconds, as a Date holds them: both adapters then give the same string.
  return match ? new Date(`${match[1]}T${match[2]!.slice(0, 12)}Z`).toISOString() : undefined;
}

export function normalizeRows<Row>(rows: Record<string, unknown>[], options: QueryOptions = {}): Row[] {
  const json = new Set(options.json ?? []);
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      if (json.has(key)) {
        if (typeof value === 'string') row[key] = JSON.parse(value);
        continue;
      }
      const timestamp = timestampOf(value);
      if (timestamp !== undefined) row[key] = timestamp;
    }
  }
  return rows as Row[];
}
