/**
 * What the Data API adapter (`data-api-sql.ts`) sends and reads, as plain values:
 * the port's positional statements (`$1`, `$2`, …) as the Data API's named
 * parameters (`:p1`, `:p2`, …) with typed values, its JSON result format as row
 * objects, and its failures as errors that carry no SQL text and no parameter
 * values (at most the SQLSTATE and the Data API's error name). Nothing here talks
 * to the service; this module only imports the SDK's types.
 *
 * Encoding decisions (the Data API's PostgreSQL driver binds values as typed):
 * - string → `stringValue` (bound as varchar: a non-text column needs an explicit
 *   cast in the SQL, e.g. `$1::uuid`, `$2::jsonb`, `$3::vector`, `$4::text[]`);
 * - integer number → `longValue` (bigint); other numbers → `doubleValue` (float8);
 * - boolean → `booleanValue`; null/undefined → `isNull: true` (untyped);
 * - only the parameters the statement references are sent.
 *
 * Decoding (`formatRecordsAs: 'JSON'`, `decimalReturnType: 'STRING'`,
 * `longReturnType: 'LONG'`, which matches what PGlite returns for those types):
 * - int2/int4/int8, float4/float8 → numbers; numeric → string; boolean → boolean;
 * - uuid, text, vector, tsvector, date → strings; text[] and other arrays → arrays;
 * - json/jsonb → the JSON *text*: with JSON formatting the Data API sends no
 *   column metadata, so a jsonb value cannot be told from a text value holding
 *   JSON. The columns a query names in `options.json` are parsed here
 *   (`row-values.ts`), so callers get what PGlite gives them;
 * - timestamp/timestamptz → the Data API sends `YYYY-MM-DD HH:MM:SS[.ffffff]` in
 *   UTC without a zone, which `new Date()` would read as *local* time. Top-level
 *   string values of exactly that shape are rewritten to ISO-8601 UTC with
 *   milliseconds, the port's form (`row-values.ts`). It would also touch a text
 *   column holding exactly that shape, which the core never reads.
 */
import type { SqlParameter } from '@aws-sdk/client-rds-data';
import type { QueryOptions, SqlParam } from '../ports/sql.ts';
import { DatabaseError } from './database-error.ts';
import { normalizeRows } from './row-values.ts';

/**
 * A database failure with no SQL text and no parameter values: the SQLSTATE when
 * the Data API's message carries one (`…; SQLState: 23505`), and the Data API's
 * error name (e.g. `DatabaseResumingException`, `ForbiddenException`), which is a
 * fixed identifier and safe to log.
 */
export class DataApiError extends DatabaseError {
  readonly errorType: string | undefined;
  constructor(code: string | undefined, errorType: string | undefined) {
    super(code);
    this.errorType = errorType;
    if (!code && errorType) this.message = `Database error (Data API ${errorType})`;
  }
}

/** The `DataApiError` for any failure: the service's message is read for its SQLSTATE, then dropped. */
export function toDatabaseError(error: unknown): DataApiError {
  if (error instanceof DataApiError) return error;
  const message = error && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
  const name = error && typeof error === 'object' ? (error as { name?: unknown }).name : undefined;
  const code = typeof message === 'string' ? /SQLState:\s*([0-9A-Z]{5})/i.exec(message)?.[1]?.toUpperCase() : undefined;
  return new DataApiError(code, typeof name === 'string' && /^[A-Za-z]{1,64}$/.test(name) ? name : undefined);
}

/**
 * Rewrites `$n` placeholders to `:pn`, leaving string literals ('…', E'…'),
 * quoted identifiers ("…"), dollar-quoted text ($tag$…$tag$) and comments alone.
 * Returns the rewritten text and the (1-based) parameter numbers it references.
 */
export function toNamedParameters(text: string): { sql: string; used: number[] } {
  let out = '';
  const used = new Set<number>();
  let i = 0;
  const n = text.length;
  const isIdentChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "'") {
      // E'…' allows backslash escapes; standard strings only double the quote.
      const escapes = (text[i - 1] === 'E' || text[i - 1] === 'e') && !isIdentChar(text[i - 2]);
      let j = i + 1;
      while (j < n) {
        if (escapes && text[j] === '\\') j += 2;
        else if (text[j] === "'" && text[j + 1] === "'") j += 2;
        else if (text[j] === "'") break;
        else j += 1;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < n && !(text[j] === '"' && text[j + 1] !== '"')) j += text[j] === '"' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      const j = end === -1 ? n : end;
      out += text.slice(i, j);
      i = j;
    } else if (c === '/' && next === '*') {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (text[j] === '/' && text[j + 1] === '*') (depth += 1), (j += 2);
        else if (text[j] === '*' && text[j + 1] === '/') (depth -= 1), (j += 2);
        else j += 1;
      }
      out += text.slice(i, j);
      i = j;
    } else if (c === '$' && !isIdentChar(text[i - 1])) {
      const param = /^\$(\d+)/.exec(text.slice(i, i + 12));
      if (param) {
        const number = Number(param[1]);
        used.add(number);
        out += `:p${number}`;
        i += param[0].length;
        continue;
      }
      const tag = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(text.slice(i, i + 70));
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        const j = close === -1 ? n : close + tag[0].length;
        out += text.slice(i, j);
        i = j;
        continue;
      }
      out += c;
      i += 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return { sql: out, used: [...used].sort((a, b) => a - b) };
}

/** The Data API's typed value for one port parameter. */
export function toDataApiValue(value: SqlParam | undefined): SqlParameter['value'] {
  if (value === null || value === undefined) return { isNull: true };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { booleanValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { longValue: value } : { doubleValue: value };
  throw new TypeError(`Unsupported SQL parameter type: ${typeof value}`);
}

/**
 * A port statement as the Data API takes it: the rewritten text and a named, typed
 * value for each parameter it references. A placeholder without a value is refused
 * before anything is sent, with Postgres' own answer (42P02, undefined_parameter).
 */
export function toStatement(text: string, params: readonly SqlParam[]): { sql: string; parameters: SqlParameter[] } {
  const { sql, used } = toNamedParameters(text);
  const missing = used.find((number) => number < 1 || number > params.length);
  if (missing !== undefined) throw new DataApiError('42P02', undefined);
  return { sql, parameters: used.map((number) => ({ name: `p${number}`, value: toDataApiValue(params[number - 1]) })) };
}

/** Parses `formattedRecords` into the port's row values (see the header and `row-values.ts`). */
export function decodeRecords<Row>(formatted: string | undefined, options: QueryOptions = {}): Row[] {
  if (!formatted) return [];
  return normalizeRows<Row>(JSON.parse(formatted) as Record<string, unknown>[], options);
}
