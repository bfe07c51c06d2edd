/**
 * The one place tool outcomes become MCP `tools/call` results.
 *
 * Success: the structured object, also as JSON text for clients that read only
 * `content`. Failure: `isError: true` with `{"error":{"code","message","details"}}`
 * in both places. Only the published `TOOL_ERROR_CODES` reach a caller: any other
 * code (an owner-command error thrown by shared code) becomes `internal`, because
 * the tools' output schemas promise exactly those codes. Internal failures carry a
 * generic message, never a stack trace, SQL text or the caller's input.
 */
import type { z } from 'zod';
import { TOOL_ERROR_CODES, type ToolErrorCode } from '../../schema/tools.ts';
import { AppError, INTERNAL_MESSAGE, ValidationError, toAppError } from '../errors/app-error.ts';
import type { ToolCallResult } from '../ports/tool-invoker.ts';

export function toolSuccess(value: object): ToolCallResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

export function toolError(error: unknown): ToolCallResult {
  const appError = toAppError(error);
  const published = (TOOL_ERROR_CODES as readonly string[]).includes(appError.code);
  const body = published
    ? { error: { code: appError.code as ToolErrorCode, message: appError.message, details: appError.details } }
    : { error: { code: 'internal' satisfies ToolErrorCode, message: INTERNAL_MESSAGE, details: {} } };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

/** The error code a tool outcome reports: what its result carries (`internal` for anything unpublished). */
export function toolErrorCode(error: unknown): ToolErrorCode {
  const code = error instanceof AppError ? error.code : 'internal';
  return (TOOL_ERROR_CODES as readonly string[]).includes(code) ? (code as ToolErrorCode) : 'internal';
}

/** Parses tool arguments, turning zod issues into a stable `validation_error`. */
/** The fixed values an issue allows, also inside a union (`topic` is one value or a list of them). */
function allowedValues(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'invalid_value') return issue.values.map(String);
  if (issue.code === 'invalid_union') return [...new Set(issue.errors.flat().flatMap(allowedValues))];
  return [];
}

export function parseArguments<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  throw new ValidationError('Invalid arguments. See details.issues for each problem.', {
    issues: parsed.error.issues.map((issue) => {
      // A value outside a fixed set (topic, task_type, category…) lists the allowed ones, so the caller can fix it.
      const allowed = allowedValues(issue);
      return {
        path: issue.path.join('.'),
        code: issue.code,
        message: allowed.length > 0 && issue.code === 'invalid_union' ? `Invalid option: expected one of ${allowed.join(', ')}, or a list of them` : issue.message,
        ...(allowed.length > 0 ? { allowed } : {}),
      };
    }),
  });
}
