/**
 * The `Sql` port: the only way the core talks to Postgres.
 *
 * Parameters are positional (`$1`, `$2`, …) and plain scalars; arrays and vectors
 * travel as Postgres text literals (or JSON text) so that the same statements run
 * over PGlite locally and the RDS Data API on AWS, which takes no array parameters.
 *
 * Every adapter returns the same row values, so no caller decodes per adapter
 * (`test/contracts/sql.contract.ts` holds each adapter to this):
 * - int2/int4/int8 and float4/float8 → number; numeric → string; boolean → boolean;
 * - text, uuid, vector → string; date → `YYYY-MM-DD`;
 * - timestamptz → an ISO-8601 UTC string with milliseconds (`2026-01-31T08:00:00.000Z`);
 * - arrays such as text[] → arrays;
 * - json/jsonb → parsed values, for the columns the caller names in `options.json`
 *   (the Data API sends JSON as text and no column types, so it cannot tell them
 *   from text columns on its own).
 *
 * This module defines the contract only; adapters implement it.
 */
export type SqlParam = string | number | boolean | null;

export interface QueryOptions {
  /** Result columns holding json or jsonb; they arrive parsed. */
  readonly json?: readonly string[];
}

export interface Sql {
  /** Runs one statement and returns its rows as plain objects. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly SqlParam[], options?: QueryOptions): Promise<Row[]>;
  /** Runs `work` in one transaction: all of it commits, or none of it does. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
}
