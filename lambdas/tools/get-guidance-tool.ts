/**
 * `get_guidance` as a tool: full (or brief) approved records by slug or id, in the
 * order asked, each once; everything else is listed in `missing`, and a
 * deprecated record's successor (if it names one) in `superseded_by`.
 */
import { getGuidanceInput } from '../../schema/tools.ts';
import type { Sql } from '../ports/sql.ts';
import type { Logger } from '../ports/logger.ts';
import { findApprovedRecords, findSuccessors } from '../records/record-read.ts';
import { shapeRecord, withEvidenceStanding } from '../records/record-shape.ts';
import { parseArguments } from './tool-result.ts';
import { GUEST_SCOPE } from '../auth/caller-scope.ts';
import { guardedTool, type ToolHandler } from './guarded-tool.ts';

export function getGuidanceTool(deps: { sql: Sql; logger: Logger; driftDemotesConfidence?: boolean }): ToolHandler {
  return guardedTool('get_guidance', deps.logger, async (args, call) => {
    const input = parseArguments(getGuidanceInput, args);
    // A record outside the caller's collections is missing, exactly like an unknown one.
    const collections = (call.scope ?? GUEST_SCOPE).collections;
    const found = await findApprovedRecords(deps.sql, input.ids, collections);
    const results = [];
    const missing: string[] = [];
    const returned = new Set<string>();
    for (const id of input.ids) {
      const record = found.get(id);
      if (!record) missing.push(id);
      else if (!returned.has(record.id)) {
        returned.add(record.id);
        const shown = withEvidenceStanding(record, deps.driftDemotesConfidence ?? false);
        results.push(input.detail === 'full' ? shapeRecord(shown, 'full') : shapeRecord(shown, 'brief'));
      }
    }
    // A withdrawn record that names its successor says so, so the agent can ask for that one instead.
    const successors = await findSuccessors(deps.sql, missing, collections);
    return successors.size > 0 ? { results, missing, superseded_by: Object.fromEntries(successors) } : { results, missing };
  });
}
