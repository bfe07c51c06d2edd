/**
 * How the console turns an admin command's refusal into a message on the page:
 * the command's own words and its first problem, with the matching status; an
 * internal failure is never shown (it goes to the console's error page).
 */
import { describe, expect, it } from 'vitest';
import { refusal } from '../../lambdas/console/console-context.ts';
import { AppError, ValidationError } from '../../lambdas/errors/app-error.ts';

describe('refusal', () => {
  it('shows a validation error with its first problem', () => {
    const error = new ValidationError('Invalid admin command.', { issues: [{ path: 'overrides.0.reason', message: 'an override needs a reason of at least 10 characters' }] });
    expect(refusal(error)).toEqual({ message: 'Invalid admin command. (overrides.0.reason: an override needs a reason of at least 10 characters)', status: 400 });
  });

  it('keeps the status of what went wrong', () => {
    expect(refusal(new AppError('not_found', 'No API key has that id.')).status).toBe(404);
    expect(refusal(new AppError('conflict', 'Busy.')).status).toBe(409);
  });

  it('never shows an internal failure or a stray error', () => {
    const internal = new AppError('internal', 'secret detail');
    expect(() => refusal(internal)).toThrow(internal);
    const stray = new Error('SELECT * FROM api_keys');
    expect(() => refusal(stray)).toThrow(stray);
  });
});
