/**
 * The scheduled source check on AWS: every source of every approved and
 * candidate record checked against its page (`records/source-verification.ts`,
 * through the untrusted fetcher: public addresses only), each result stored, and,
 * when anything drifted or could not be read, one summary published to the
 * stack's SNS topic so the owner hears of it. A drifted record stays published:
 * the evidence gate holds its next approval, and `records stale` lists it.
 */
import type { Logger } from '../ports/logger.ts';
import type { Sql } from '../ports/sql.ts';
import { sourcesToVerify, verifySources, type VerifiedSource } from '../records/source-verification.ts';
import type { SourceCheckLimits, SourceFetcher } from '../records/source-check.ts';

export interface SourceCheckJobDeps {
  readonly sql: Sql;
  readonly fetcher: SourceFetcher;
  /** Sends the owner a notice; the SNS topic on AWS. */
  readonly publish: (subject: string, message: string) => Promise<void>;
  readonly logger: Logger;
  readonly limits: SourceCheckLimits;
}

export interface SourceCheckSummary {
  readonly checked: number;
  readonly verified: number;
  /** Every source that is not `verified`, for the notice. */
  readonly problems: readonly Pick<VerifiedSource, 'slugs' | 'url' | 'status' | 'detail' | 'similarity'>[];
  readonly notified: boolean;
}

/** SNS subjects are at most 100 characters; messages far below its 256 KB. */
const MAX_LISTED = 200;

export async function runSourceCheckJob(deps: SourceCheckJobDeps): Promise<SourceCheckSummary> {
  const results = await verifySources(deps.sql, deps.fetcher, await sourcesToVerify(deps.sql), deps.limits);
  const problems = results.filter((r) => r.status !== 'verified').map(({ slugs, url, status, detail, similarity }) => ({ slugs, url, status, detail, similarity }));
  const summary = { checked: results.length, verified: results.length - problems.length, problems };
  deps.logger.info('source_checks_done', { checked: summary.checked, verified: summary.verified, problems: problems.length });
  if (problems.length === 0) return { ...summary, notified: false };
  await deps.publish(`chatctx: ${problems.length} of ${results.length} quoted sources drifted or could not be read`, notice(summary.checked, problems));
  return { ...summary, notified: true };
}

function notice(checked: number, problems: SourceCheckSummary['problems']): string {
  const lines = problems.slice(0, MAX_LISTED).map((p) => {
    const how = p.status === 'drifted' ? `drifted (closest passage ${Math.round((p.similarity ?? 0) * 100)}% alike)` : `${p.status}${p.detail ? `: ${p.detail}` : ''}`;
    return `- ${p.slugs.join(', ')}: ${p.url} ${how}`;
  });
  const more = problems.length > MAX_LISTED ? [`…and ${problems.length - MAX_LISTED} more.`] : [];
  return [
    `The weekly check of quoted evidence read ${checked} sources; ${problems.length} no longer show their excerpt or could not be read:`,
    '',
    ...lines,
    ...more,
    '',
    'The records stay published. Review them (`npx chatctx --remote <AdminFunctionName> records verify SLUG` shows the closest passage),',
    'then quote the page as it reads now, or deprecate the record. Until then the evidence gate refuses their next approval.',
  ].join('\n');
}
