/**
 * How owner commands and their outcomes travel, in one place for every transport:
 * the admin Lambda's event and answer, the local admin endpoint's NDJSON lines,
 * and both clients (`chatctx` locally and with `--remote`).
 *
 * An outcome is `{"result": …}` or `{"error": {"code", "message", "details"}}`,
 * with the codes of `errors/app-error.ts`; the local endpoint may send
 * `{"progress": {"done", "total"}}` lines before it. Internal failures carry the
 * generic message only. The local endpoint's HTTP status for each code is
 * `ADMIN_HTTP_STATUS`. Running a command and wrapping its outcome is
 * `runEnveloped` in `admin-operations.ts`; this module imports none of the
 * operations, so a client that only sends commands loads little.
 */
import { AppError, isErrorCode, toAppError, type ErrorCode } from '../errors/app-error.ts';
import type { EmbedProgress } from '../embeddings/record-embeddings.ts';

export interface AdminErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export type AdminEnvelope = { readonly result: unknown } | { readonly error: AdminErrorBody };
export type AdminLine = AdminEnvelope | { readonly progress: EmbedProgress };

/** The local admin endpoint's HTTP status for an error (200 once a stream of progress has begun). */
export const ADMIN_HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  validation_error: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
  internal: 500,
};

export function errorEnvelope(error: unknown): { readonly error: AdminErrorBody } {
  const appError = toAppError(error);
  return { error: { code: appError.code, message: appError.message, details: appError.details } };
}

export function resultEnvelope(result: unknown): { readonly result: unknown } {
  return { result };
}

/** The result inside an outcome, or its error thrown as the same `AppError` the local path throws. */
export function openEnvelope(value: unknown): unknown {
  if (value && typeof value === 'object' && 'result' in value) return (value as { result: unknown }).result;
  const error = value && typeof value === 'object' ? (value as { error?: Partial<AdminErrorBody> }).error : undefined;
  if (error && isErrorCode(error.code) && typeof error.message === 'string') {
    throw new AppError(error.code, error.message, error.details ?? {});
  }
  throw new AppError('internal', 'The admin answer was not understood; check that the CLI and the server or stack run the same version.');
}

/** Parses one NDJSON line of the local admin endpoint. */
export function parseAdminLine(text: string): AdminLine {
  try {
    return JSON.parse(text) as AdminLine;
  } catch {
    throw new AppError('internal', 'The admin answer was not understood; check that the CLI and the server run the same version.');
  }
}
