/**
 * The local server's background source checks (`CHATCTX_SOURCE_CHECK_INTERVAL_HOURS`,
 * off by default): every quoted excerpt of the approved and candidate records
 * checked against its page (`records/source-verification.ts`) every so many
 * hours, the first run a few seconds after start when the last one is due. The
 * checks wait on the network, not on the store: answers never wait for them, and
 * each result is one small insert. Logs `source_checks_done` with the counts, or
 * `source_checks_failed`.
 */
import type { Logger } from '../ports/logger.ts';
import type { Sql } from '../ports/sql.ts';
import { errorKind } from '../observability/logger.ts';
import { sourcesToVerify, verifySources } from '../records/source-verification.ts';
import type { SourceFetcher } from '../records/source-check.ts';
import { VERIFY_LIMITS } from '../admin/admin-operations.ts';

/** How soon after start a due check begins: the server answers first. */
const FIRST_RUN_DELAY_MS = 5_000;

export function scheduleSourceChecks(sql: Sql, fetcher: SourceFetcher, hours: number, logger: Logger): () => Promise<void> {
  const intervalMs = hours * 3_600_000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stopping = new AbortController();
  const run = () => {
    void (async () => {
      try {
        const results = await verifySources(sql, fetcher, await sourcesToVerify(sql), VERIFY_LIMITS, stopping.signal);
        if (stopped) return;
        const problems = results.filter((r) => r.status !== 'verified').length;
        logger.info('source_checks_done', { checked: results.length, verified: results.length - problems, problems });
      } catch (error) {
        if (!stopped) logger.warn('source_checks_failed', { error: errorKind(error) });
      } finally {
        if (!stopped) timer = setTimeout(run, intervalMs).unref();
      }
    })();
  };
  const start = async () => {
    const [row] = await sql.query<{ newest: string | null }>("SELECT max(checked_at)::text AS newest FROM source_checks WHERE how = 'fetched'");
    const due = row?.newest ? Date.parse(row.newest) + intervalMs - Date.now() : 0;
    if (!stopped) timer = setTimeout(run, Math.max(FIRST_RUN_DELAY_MS, due)).unref();
  };
  const started = start().catch((error: unknown) => logger.warn('source_checks_failed', { error: errorKind(error) }));
  // Stopping does not wait for a run: no new source is started, and the ones in flight end within their deadline.
  return async () => {
    stopped = true;
    stopping.abort();
    await started;
    clearTimeout(timer);
  };
}
