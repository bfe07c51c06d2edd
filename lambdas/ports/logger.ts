/**
 * The `Logger` port: structured events with scalar fields only, so that a whole
 * request, an argument object or an error can never be dumped by accident. Raw
 * queries, comments, keys and SQL must not reach a log line: callers log what
 * happened (tool, mode, counts, status, durations), never what the caller said.
 * Locally a JSON-lines writer (`observability/logger.ts`); on Lambda, Powertools
 * (`aws/powertools-logger.ts`).
 */
export type LogValue = string | number | boolean | null | undefined;
export type LogFields = Record<string, LogValue>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}
