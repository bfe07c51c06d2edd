/**
 * The one place tool outcomes become MCP `tools/call` results.
 *
 * Success: the structured object, also as JSON text for clients that read only
 * `content`. Failure: `isError: true` with `{"error":{"code","message","details"}}`
 * in both places. Internal failures carry a generic message, never a stack trace,
 * SQL text or the caller's input.
 */
import type { z } from 'zod';
import { AppError, ValidationError, toAppError } from '../errors/app-error.ts';

export interface ToolCallResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export function toolSuccess(value: object): ToolCallResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

export function toolError(error: unknown): ToolCallResult {
  const appError = toAppError(error);
  const body = { error: { code: appError.code, message: appError.message, details: appError.details } };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

/** Parses tool arguments, turning zod issues into a stable `validation_error`. */
export function parseArguments<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  throw new ValidationError('Invalid arguments. See details.issues for each problem.', {
    issues: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), code: issue.code, message: issue.message })),
  });
}

export { AppError };
