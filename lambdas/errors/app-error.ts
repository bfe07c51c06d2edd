/**
 * Errors as values with stable codes. The core throws these; exactly one place maps
 * them to an HTTP status (`protocol/http-responses.ts`) and one to a tool result
 * (`tools/tool-result.ts`). Messages are written for callers and never carry stack
 * traces, SQL text or query text; the original `cause` is kept for local debugging
 * only and is never serialized.
 */
import type { ErrorCode } from '../../schema/tools.ts';

export type { ErrorCode };

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

/** Wraps anything unexpected so that only a generic message can leave the process. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError('internal', 'Internal error. The request was not completed; try again later.', {}, { cause: error });
}
