/**
 * The error every Sql adapter throws for a failed statement: the SQLSTATE only,
 * never the statement text or its parameters. Kept in its own module so an adapter
 * (the Data API one on Lambda) can use it without loading another (PGlite).
 */
export class DatabaseError extends Error {
  readonly code: string | undefined;
  constructor(code: string | undefined) {
    super(`Database error${code ? ` (SQLSTATE ${code})` : ''}`);
    this.name = 'DatabaseError';
    this.code = code;
  }
}
