/**
 * `search_knowledge` as a tool: validate the arguments, run the search service.
 */
import { searchKnowledgeInput } from '../../schema/tools.ts';
import { searchKnowledge, type SearchDeps } from '../retrieval/search-service.ts';
import { parseArguments } from './tool-result.ts';
import { guardedTool, type ToolHandler } from './guarded-tool.ts';

export function searchKnowledgeTool(deps: SearchDeps): ToolHandler {
  return guardedTool('search_knowledge', deps.logger, (args, call) => searchKnowledge(deps, parseArguments(searchKnowledgeInput, args), call.scope));
}
