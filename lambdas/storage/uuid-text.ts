/**
 * Whether a string is a uuid, so a statement can compare it with a uuid column as
 * a uuid (through the column's index) instead of casting the column to text (which
 * reads every row). A string that is not a well-formed uuid names no uuid row.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The string as a uuid in the lower case Postgres prints, or null when it is not one. */
export function asUuid(text: string): string | null {
  return UUID.test(text) ? text.toLowerCase() : null;
}

/** The same test in SQL, for values that only the statement sees (a column of text). */
export const SQL_UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
