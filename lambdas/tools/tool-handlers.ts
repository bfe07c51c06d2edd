/**
 * The three tools together, for the local runtime (one process serves them all).
 * On AWS each tool's Lambda imports only its own tool module, so a bundle carries
 * only what that tool needs. Each tool validates its own arguments: a tool never
 * trusts its caller.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import type { Logger } from '../ports/logger.ts';
import type { ToolHandler, ToolName } from './guarded-tool.ts';
import type { SearchCache } from '../retrieval/search-cache.ts';
import type { ResidentKeywordIndex } from '../retrieval/resident-keyword-index.ts';
import type { SearchEventSink } from '../retrieval/search-events.ts';
import { searchKnowledgeTool } from './search-knowledge-tool.ts';
import { getGuidanceTool } from './get-guidance-tool.ts';
import { submitFeedbackTool } from './submit-feedback-tool.ts';

export type { ToolHandler, ToolName };

export interface ToolDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  readonly embedder?: Embedder;
  readonly logger: Logger;
  /** Kept answers and records for search (see search-service.ts). */
  readonly cache?: SearchCache;
  /** The keyword side from memory (see search-service.ts). */
  readonly keywordIndex?: ResidentKeywordIndex;
  /** Where search events go (see search-service.ts). */
  readonly events?: SearchEventSink;
  /** Show records whose evidence drifted with their confidence one step lower (`CHATCTX_DRIFT_DEMOTES_CONFIDENCE`). */
  readonly driftDemotesConfidence?: boolean;
}

export function createToolHandlers(deps: ToolDeps): Record<ToolName, ToolHandler> {
  return {
    search_knowledge: searchKnowledgeTool(deps),
    get_guidance: getGuidanceTool(deps),
    submit_feedback: submitFeedbackTool(deps),
  };
}
