/**
 * `submit_feedback` as a tool: validate, store anonymously, acknowledge.
 */
import { submitFeedbackInput } from '../../schema/tools.ts';
import type { Sql } from '../ports/sql.ts';
import type { Logger } from '../ports/logger.ts';
import { storeFeedback } from '../feedback/feedback-repository.ts';
import { parseArguments } from './tool-result.ts';
import { guardedTool, type ToolHandler } from './guarded-tool.ts';
import { GUEST_SCOPE } from '../auth/caller-scope.ts';

export function submitFeedbackTool(deps: { sql: Sql; logger: Logger }): ToolHandler {
  return guardedTool('submit_feedback', deps.logger, (args, call) =>
    storeFeedback(deps.sql, parseArguments(submitFeedbackInput, args), { idempotencyKey: call.idempotencyKey, scope: call.scope ?? GUEST_SCOPE }),
  );
}
