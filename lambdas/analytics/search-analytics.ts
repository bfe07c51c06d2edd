/**
 * What an owner learns from the service's own traces: how many searches ran per
 * UTC day and in which retrieval mode, how often retrieval was degraded, which
 * technologies and topics were asked about without a match (coverage gaps), which
 * records searches showed most, and what feedback agents sent, per category and
 * per record. Plus the retention of
 * search events: rows older than the retention window are deleted.
 *
 * It reads `search_events` and `feedback` only through counts: the query hash is
 * never selected, and no query text exists to select. Every statement is plain
 * parameterised SQL with timestamps as ISO text, so it runs the same on PGlite
 * and on the Aurora Data API.
 */
import type { Sql } from '../ports/sql.ts';
import { SQL_UUID_PATTERN } from '../storage/uuid-text.ts';
import { FEEDBACK_CATEGORIES } from '../../schema/tools.ts';

const DAY_MS = 86_400_000;
/** The retrieval modes a search event records. */
export const SEARCH_MODES = ['hybrid', 'keyword_fallback', 'no_match'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
const TOP_GAPS = 10;
const TOP_RECORDS = 20;
const TOP_SHOWN = 10;

export interface DayCount {
  day: string;
  searches: number;
  hybrid: number;
  keyword_fallback: number;
  no_match: number;
  degraded: number;
}

export interface CoverageGap {
  name: string;
  no_match: number;
  searches: number;
}

export interface RecordFeedback {
  /** The record's slug when the reference resolves to a record, else the reference as sent. */
  record: string;
  title: string | null;
  counts: Record<string, number>;
  total: number;
}

export interface ShownRecord {
  slug: string;
  title: string;
  /** Searches in the window that returned it. */
  shown: number;
}

export interface AnalyticsReport {
  days: number;
  /** Start of the window: UTC midnight, `days - 1` days before the day of `now`. */
  since: string;
  searches: number;
  per_day: DayCount[];
  modes: Record<SearchMode, { count: number; share: number }>;
  degraded_rate: number;
  coverage_gaps: { technologies: CoverageGap[]; topics: CoverageGap[] };
  /** The records searches returned most in the window (at most 10; records since deleted are left out). */
  top_records: ShownRecord[];
  feedback: { total: number; by_category: Record<string, number>; by_record: RecordFeedback[] };
}

/** A fraction 0..1 rounded to 3 decimals; 0 when there is nothing to divide by. */
const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 1000);

/** The window `[since, until)`: whole UTC days, the day of `now` the last one. */
function windowOf(days: number, now: Date): { since: Date; until: Date; dayNames: string[] } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const since = new Date(today - (days - 1) * DAY_MS);
  const dayNames = Array.from({ length: days }, (_, i) => new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10));
  return { since, until: new Date(today + DAY_MS), dayNames };
}

async function perDay(sql: Sql, since: Date, until: Date, dayNames: readonly string[]): Promise<DayCount[]> {
  const rows = await sql.query<DayCount>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
            count(*)::int AS searches,
            (count(*) FILTER (WHERE mode = 'hybrid'))::int AS hybrid,
            (count(*) FILTER (WHERE mode = 'keyword_fallback'))::int AS keyword_fallback,
            (count(*) FILTER (WHERE mode = 'no_match'))::int AS no_match,
            (count(*) FILTER (WHERE degraded))::int AS degraded
       FROM search_events
      WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz
      GROUP BY 1`,
    [since.toISOString(), until.toISOString()],
  );
  const byDay = new Map(rows.map((row) => [row.day, row]));
  return dayNames.map((day) => byDay.get(day) ?? { day, searches: 0, hybrid: 0, keyword_fallback: 0, no_match: 0, degraded: 0 });
}

/** Names searched for (technologies or topics, case-insensitively) that came back `no_match`, worst first. */
async function gaps(sql: Sql, column: 'technologies' | 'topics', since: Date, until: Date): Promise<CoverageGap[]> {
  return sql.query<CoverageGap>(
    `SELECT min(n.name COLLATE "C") AS name,
            (count(DISTINCT e.id) FILTER (WHERE e.mode = 'no_match'))::int AS no_match,
            count(DISTINCT e.id)::int AS searches
       FROM search_events e CROSS JOIN LATERAL unnest(e.${column}) AS n(name)
      WHERE e.created_at >= $1::timestamptz AND e.created_at < $2::timestamptz
      GROUP BY lower(n.name)
     HAVING count(DISTINCT e.id) FILTER (WHERE e.mode = 'no_match') > 0
      ORDER BY 2 DESC, 1
      LIMIT ${TOP_GAPS}`,
    [since.toISOString(), until.toISOString()],
  );
}

/** The records returned by the most searches in the window, most first. */
async function mostShown(sql: Sql, since: Date, until: Date): Promise<ShownRecord[]> {
  return sql.query<ShownRecord>(
    `SELECT r.slug, r.title, s.shown
       FROM (SELECT x.id, count(DISTINCT e.id)::int AS shown
               FROM search_events e CROSS JOIN LATERAL unnest(e.result_ids) AS x(id)
              WHERE e.created_at >= $1::timestamptz AND e.created_at < $2::timestamptz
              GROUP BY x.id) s
       JOIN records r ON r.id = s.id
      ORDER BY s.shown DESC, r.slug COLLATE "C"
      LIMIT ${TOP_SHOWN}`,
    [since.toISOString(), until.toISOString()],
  );
}

const zeroCounts = (): Record<string, number> => Object.fromEntries(FEEDBACK_CATEGORIES.map((c) => [c, 0]));

/** Feedback in the window per category, and per record (a slug or id resolved to the record's slug). */
async function feedbackIn(sql: Sql, since: Date, until: Date): Promise<AnalyticsReport['feedback']> {
  const rows = await sql.query<{ record: string | null; title: string | null; category: string; n: number }>(
    `SELECT coalesce(r.slug, f.record_ref) AS record, r.title, f.category, count(*)::int AS n
       FROM feedback f
       LEFT JOIN LATERAL (
         SELECT slug, title FROM records
          WHERE records.slug = f.record_ref
             OR records.id = CASE WHEN f.record_ref ~ '${SQL_UUID_PATTERN}' THEN f.record_ref::uuid END
          ORDER BY records.slug = f.record_ref DESC LIMIT 1
       ) r ON true
      WHERE f.created_at >= $1::timestamptz AND f.created_at < $2::timestamptz
      GROUP BY 1, 2, 3`,
    [since.toISOString(), until.toISOString()],
  );
  const byCategory = zeroCounts();
  const byRecord = new Map<string, RecordFeedback>();
  for (const row of rows) {
    byCategory[row.category] = (byCategory[row.category] ?? 0) + row.n;
    if (row.record === null) continue;
    const entry = byRecord.get(row.record) ?? { record: row.record, title: row.title, counts: zeroCounts(), total: 0 };
    entry.counts[row.category] = (entry.counts[row.category] ?? 0) + row.n;
    entry.total += row.n;
    byRecord.set(row.record, entry);
  }
  const total = Object.values(byCategory).reduce((sum, n) => sum + n, 0);
  const ranked = [...byRecord.values()].sort((a, b) => b.total - a.total || (a.record < b.record ? -1 : a.record > b.record ? 1 : 0));
  return { total, by_category: byCategory, by_record: ranked.slice(0, TOP_RECORDS) };
}

/** The owner's report over the last `days` UTC days (today included). */
export async function analyticsReport(sql: Sql, options: { days: number; now?: Date }): Promise<AnalyticsReport> {
  const { since, until, dayNames } = windowOf(options.days, options.now ?? new Date());
  const [days, technologies, topics, topRecords, feedback] = await Promise.all([
    perDay(sql, since, until, dayNames),
    gaps(sql, 'technologies', since, until),
    gaps(sql, 'topics', since, until),
    mostShown(sql, since, until),
    feedbackIn(sql, since, until),
  ]);
  const sum = (pick: (d: DayCount) => number) => days.reduce((total, d) => total + pick(d), 0);
  const searches = sum((d) => d.searches);
  const modes = Object.fromEntries(
    SEARCH_MODES.map((mode) => {
      const count = sum((d) => d[mode]);
      return [mode, { count, share: share(count, searches) }];
    }),
  ) as AnalyticsReport['modes'];
  return {
    days: options.days,
    since: since.toISOString(),
    searches,
    per_day: days,
    modes,
    degraded_rate: share(sum((d) => d.degraded), searches),
    coverage_gaps: { technologies, topics },
    top_records: topRecords,
    feedback,
  };
}

/** Deletes search events older than `retentionDays` days before `now`; returns how many went. */
export async function purgeSearchEvents(sql: Sql, retentionDays: number, now: Date = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  const [row] = await sql.query<{ purged: number }>(
    'WITH gone AS (DELETE FROM search_events WHERE created_at < $1::timestamptz RETURNING 1) SELECT count(*)::int AS purged FROM gone',
    [cutoff.toISOString()],
  );
  return row?.purged ?? 0;
}
