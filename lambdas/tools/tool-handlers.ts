/**
 * The three tools as plain async functions from raw arguments to a result. The same
 * functions run in-process locally and inside one Lambda per tool on AWS; each
 * validates its own arguments so a tool never trusts its caller.
 */
import { getGuidanceInput, searchKnowledgeInput, submitFeedbackInput, type ToolDefinition } from '../../schema/tools.ts';
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Logger } from '../observability/logger.ts';
import { errorKind } from '../observability/logger.ts';
import { searchKnowledge } from '../retrieval/search-service.ts';
import { findApprovedRecords, shapeRecord } from '../guidance/record-view.ts';
import { storeFeedback } from '../feedback/feedback-repository.ts';
import { AppError } from '../errors/app-error.ts';
import { parseArguments, toolError, toolSuccess, type ToolCallResult } from './tool-result.ts';

export interface ToolDeps {
  readonly sql: Sql;
  readonly pepper: () => Promise<Buffer>;
  readonly embedder?: Embedder;
  readonly logger: Logger;
}

export type ToolName = ToolDefinition['name'];
export type ToolHandler = (args: unknown) => Promise<ToolCallResult>;

export function createToolHandlers(deps: ToolDeps): Record<ToolName, ToolHandler> {
  const guarded =
    (name: ToolName, run: (args: unknown) => Promise<object>): ToolHandler =>
    async (args) => {
      const started = performance.now();
      try {
        const result = toolSuccess(await run(args));
        deps.logger.info('tool_call', { tool: name, outcome: 'ok', duration_ms: Math.round(performance.now() - started) });
        return result;
      } catch (error) {
        const code = error instanceof AppError ? error.code : 'internal';
        const log = code === 'internal' ? deps.logger.error : deps.logger.info;
        log('tool_call', { tool: name, outcome: code, error: code === 'internal' ? errorKind(error) : undefined, duration_ms: Math.round(performance.now() - started) });
        return toolError(error);
      }
    };

  return {
    search_knowledge: guarded('search_knowledge', (args) => searchKnowledge(deps, parseArguments(searchKnowledgeInput, args))),

    get_guidance: guarded('get_guidance', async (args) => {
      const input = parseArguments(getGuidanceInput, args);
      const found = await findApprovedRecords(deps.sql, input.ids);
      const results = [];
      const missing: string[] = [];
      const returned = new Set<string>();
      for (const id of input.ids) {
        const record = found.get(id);
        if (!record) missing.push(id);
        else if (!returned.has(record.id)) {
          returned.add(record.id);
          results.push(input.detail === 'full' ? shapeRecord(record, 'full') : shapeRecord(record, 'brief'));
        }
      }
      return { results, missing };
    }),

    submit_feedback: guarded('submit_feedback', (args) => storeFeedback(deps.sql, parseArguments(submitFeedbackInput, args))),
  };
}
