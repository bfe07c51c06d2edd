/**
 * The `Sql` port: the only way the core talks to Postgres.
 *
 * Parameters are positional (`$1`, `$2`, …). Values are plain JSON-ish scalars or
 * strings; arrays and vectors are passed as Postgres text literals so that the same
 * statements run over PGlite locally and the RDS Data API on AWS (which takes no
 * array parameters). This module defines the contract only; adapters implement it.
 */
export type SqlParam = string | number | boolean | null;

export interface Sql {
  /** Runs one statement and returns its rows as plain objects. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly SqlParam[]): Promise<Row[]>;
  /** Runs `work` in one transaction: all of it commits, or none of it does. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
}
