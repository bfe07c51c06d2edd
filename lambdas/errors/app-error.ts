/**
 * Errors as values with stable codes. The core throws these; each transport maps
 * them to its wire form in one place: tool results in `tools/tool-result.ts`
 * (which publishes only `TOOL_ERROR_CODES`), owner commands in
 * `admin/admin-envelope.ts` (with the HTTP status of the local admin endpoint).
 * Messages are written for callers and never carry stack traces, SQL text or query
 * text; the original `cause` is kept for local debugging only and is never
 * serialized.
 */

/** Every code an `AppError` can have: the tool codes plus those of owner commands. */
export const APP_ERROR_CODES = ['validation_error', 'not_found', 'conflict', 'unauthorized', 'unavailable', 'internal'] as const;
export type ErrorCode = (typeof APP_ERROR_CODES)[number];

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('validation_error', message, details);
    this.name = 'ValidationError';
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('not_found', message, details);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('conflict', message, details);
    this.name = 'ConflictError';
  }
}

/**
 * Something the request needs is not ready yet and nothing was done: a paused
 * database still resuming when the invocation had to answer, or a service
 * throttling us. The caller should send the same request again after
 * `retryAfterSeconds` (published as `details.retry_after_seconds` on a tool
 * result, as HTTP 503 with `Retry-After` otherwise).
 */
export class UnavailableError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, what = 'The database is starting up', options?: { cause?: unknown }) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super('unavailable', `${what}; nothing was done. Retry in ${seconds} seconds.`, { retry_after_seconds: seconds }, options);
    this.name = 'UnavailableError';
    this.retryAfterSeconds = seconds;
  }
}

/** The seconds a caller should wait before repeating a request that failed with `error`, when it is worth repeating. */
export function retryAfterOf(error: unknown): number | undefined {
  return error instanceof UnavailableError ? error.retryAfterSeconds : undefined;
}

export const INTERNAL_MESSAGE = 'Internal error. The request was not completed; try again later.';

/** Wraps anything unexpected so that only a generic message can leave the process. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError('internal', INTERNAL_MESSAGE, {}, { cause: error });
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (APP_ERROR_CODES as readonly string[]).includes(value);
}
