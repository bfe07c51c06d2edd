/**
 * The local `Logger`: one JSON object per line on stderr, plus the two helpers
 * every logging call site shares. It accepts only the port's scalar fields (see
 * `ports/logger.ts` for why).
 */
import type { LogFields, LogValue, Logger } from '../ports/logger.ts';

type Level = 'info' | 'warn' | 'error';

export function createLogger(
  write: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  base: LogFields = {},
): Logger {
  const emit = (level: Level, event: string, fields: LogFields = {}) => {
    const entry: Record<string, LogValue> = { time: new Date().toISOString(), level, event, ...base };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) entry[key] = value;
    write(JSON.stringify(entry));
  };
  return {
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, fields) => emit('error', event, fields),
  };
}

/** A logger that drops everything; for CLI commands whose output is for humans. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** Names an error without its message (which may hold SQL or input text). */
export function errorKind(error: unknown): string {
  if (error && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    const name = (error as { name?: unknown }).name;
    return [typeof name === 'string' ? name : 'Error', typeof code === 'string' ? code : undefined].filter(Boolean).join(':');
  }
  return typeof error;
}
