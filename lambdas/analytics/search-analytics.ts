/**
 * What an owner learns from the service's own traces: how many searches ran per
 * UTC day and in which retrieval mode, how often retrieval was degraded, which
 * technologies and topics were asked about without a match (coverage gaps), which
 * records searches showed most, and what feedback agents sent, per category and
 * per record, and searches per collection; for all collections or one. Plus the retention of
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
/**
 * The events a report counts: those in the window, and, for a report about one
 * collection (`$3`, an id; null for all), those whose collection set holds it.
 */
const EVENTS_IN = `e.created_at >= $1::timestamptz AND e.created_at < $2::timestamptz AND ($3::int IS NULL OR $3::int = ANY (e.collections))`;
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

/** Searches whose collection set held a collection. */
export interface CollectionSearches {
  collection: string;
  searches: number;
  no_match: number;
}

export interface AnalyticsReport {
  days: number;
  /** The collection the report is about (by name), or null for every collection. */
  collection: string | null;
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
  /** Searches per collection of the events' sets, most first. */
  per_collection: CollectionSearches[];
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

/** The window and the collection a report is about, as the statements' `$1..$3`. */
interface Scope {
  readonly since: Date;
  readonly until: Date;
  readonly collection: number | null;
}
const params = (scope: Scope) => [scope.since.toISOString(), scope.until.toISOString(), scope.collection];

async function perDay(sql: Sql, scope: Scope, dayNames: readonly string[]): Promise<DayCount[]> {
  const rows = await sql.query<DayCount>(
    `SELECT to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
            count(*)::int AS searches,
            (count(*) FILTER (WHERE e.mode = 'hybrid'))::int AS hybrid,
            (count(*) FILTER (WHERE e.mode = 'keyword_fallback'))::int AS keyword_fallback,
            (count(*) FILTER (WHERE e.mode = 'no_match'))::int AS no_match,
            (count(*) FILTER (WHERE e.degraded))::int AS degraded
       FROM search_events e
      WHERE ${EVENTS_IN}
      GROUP BY 1`,
    params(scope),
  );
  const byDay = new Map(rows.map((row) => [row.day, row]));
  return dayNames.map((day) => byDay.get(day) ?? { day, searches: 0, hybrid: 0, keyword_fallback: 0, no_match: 0, degraded: 0 });
}

/** Names searched for (technologies or topics, case-insensitively) that came back `no_match`, worst first. */
async function gaps(sql: Sql, column: 'technologies' | 'topics', scope: Scope): Promise<CoverageGap[]> {
  return sql.query<CoverageGap>(
    `SELECT min(n.name COLLATE "C") AS name,
            (count(DISTINCT e.id) FILTER (WHERE e.mode = 'no_match'))::int AS no_match,
            count(DISTINCT e.id)::int AS searches
       FROM search_events e CROSS JOIN LATERAL unnest(e.${column}) AS n(name)
      WHERE ${EVENTS_IN}
      GROUP BY lower(n.name)
     HAVING count(DISTINCT e.id) FILTER (WHERE e.mode = 'no_match') > 0
      ORDER BY 2 DESC, 1
      LIMIT ${TOP_GAPS}`,
    params(scope),
  );
}

/** The records returned by the most searches in the window, most first (for one collection: its own records). */
async function mostShown(sql: Sql, scope: Scope): Promise<ShownRecord[]> {
  return sql.query<ShownRecord>(
    `SELECT r.slug, r.title, s.shown
       FROM (SELECT x.id, count(DISTINCT e.id)::int AS shown
               FROM search_events e CROSS JOIN LATERAL unnest(e.result_ids) AS x(id)
              WHERE ${EVENTS_IN}
              GROUP BY x.id) s
       JOIN records r ON r.id = s.id
      WHERE $3::int IS NULL OR r.collection_id = $3::int
      ORDER BY s.shown DESC, r.slug COLLATE "C"
      LIMIT ${TOP_SHOWN}`,
    params(scope),
  );
}

/**
 * Searches per collection: an event counts once for every collection of the set
 * it searched (so the rows add up to more than the searches when sets overlap).
 * By name, from the events' sets of ids; which key searched is never recorded.
 */
async function perCollection(sql: Sql, scope: Scope): Promise<CollectionSearches[]> {
  return sql.query<CollectionSearches>(
    `SELECT c.name AS collection, count(*)::int AS searches,
            (count(*) FILTER (WHERE e.mode = 'no_match'))::int AS no_match
       FROM search_events e CROSS JOIN LATERAL unnest(e.collections) AS x(id)
       JOIN collections c ON c.id = x.id
      WHERE ${EVENTS_IN}
      GROUP BY c.name
      ORDER BY 2 DESC, c.name COLLATE "C"`,
    params(scope),
  );
}

const zeroCounts = (): Record<string, number> => Object.fromEntries(FEEDBACK_CATEGORIES.map((c) => [c, 0]));

/**
 * Feedback in the window per category, and per record (a slug or id resolved to
 * the record's slug). For one collection: only feedback about its records.
 */
async function feedbackIn(sql: Sql, scope: Scope): Promise<AnalyticsReport['feedback']> {
  const rows = await sql.query<{ record: string | null; title: string | null; category: string; n: number }>(
    `SELECT coalesce(r.slug, f.record_ref) AS record, r.title, f.category, count(*)::int AS n
       FROM feedback f
       LEFT JOIN LATERAL (
         SELECT slug, title, collection_id FROM records
          WHERE records.slug = f.record_ref
             OR records.id = CASE WHEN f.record_ref ~ '${SQL_UUID_PATTERN}' THEN f.record_ref::uuid END
          ORDER BY records.slug = f.record_ref DESC LIMIT 1
       ) r ON true
      WHERE f.created_at >= $1::timestamptz AND f.created_at < $2::timestamptz AND ($3::int IS NULL OR r.collection_id = $3::int)
      GROUP BY 1, 2, 3`,
    params(scope),
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

export interface ReportOptions {
  readonly days: number;
  readonly now?: Date;
  /** Only searches whose collection set holds this collection, and feedback about its records. */
  readonly collection?: { readonly id: number; readonly name: string };
}

/** The owner's report over the last `days` UTC days (today included), of every collection or of one. */
export async function analyticsReport(sql: Sql, options: ReportOptions): Promise<AnalyticsReport> {
  const { since, until, dayNames } = windowOf(options.days, options.now ?? new Date());
  const scope: Scope = { since, until, collection: options.collection?.id ?? null };
  const [days, technologies, topics, topRecords, feedback, collections] = await Promise.all([
    perDay(sql, scope, dayNames),
    gaps(sql, 'technologies', scope),
    gaps(sql, 'topics', scope),
    mostShown(sql, scope),
    feedbackIn(sql, scope),
    perCollection(sql, scope),
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
    collection: options.collection?.name ?? null,
    since: since.toISOString(),
    searches,
    per_day: days,
    modes,
    degraded_rate: share(sum((d) => d.degraded), searches),
    coverage_gaps: { technologies, topics },
    top_records: topRecords,
    feedback,
    per_collection: collections,
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
