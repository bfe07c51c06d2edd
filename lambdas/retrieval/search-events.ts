/**
 * The privacy-preserving search event (contract §8: the query's salted hash, topics,
 * technology filters, mode, result count, degraded state, and the ids of the records
 * returned, which are not private) and how it is written.
 *
 * `writeSearchEvents` inserts any number of events in one statement. A serverless
 * search writes its one event at once (`DirectSearchEvents`); the local server,
 * which answers many searches a second on one embedded database, buffers them and
 * writes them together (`BufferedSearchEvents`), so a search does not pay for a
 * commit of its own. A failed write never fails a search: it is logged as
 * `search_event_failed` with the number of events lost.
 */
import type { Sql } from '../ports/sql.ts';
import type { Logger } from '../ports/logger.ts';
import { errorKind } from '../observability/logger.ts';
import { purgeSearchEvents } from '../analytics/search-analytics.ts';

export interface SearchEvent {
  readonly query_hash: string;
  readonly topics: readonly string[];
  readonly technologies: readonly string[];
  readonly mode: string;
  readonly result_count: number;
  readonly degraded: boolean;
  /** The ids of the records returned, in order (the records most shown, `analytics.report`). */
  readonly result_ids: readonly string[];
  /** The collection ids the caller saw (never which key it was); public when absent. */
  readonly collections?: readonly number[];
}

export interface SearchEventSink {
  /** Hands an event over; resolves once it is written or safely queued. Never rejects. */
  record(event: SearchEvent): Promise<void>;
}

async function writeSearchEvents(sql: Sql, events: readonly SearchEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql.query(
    `INSERT INTO search_events (query_hash, topics, technologies, mode, result_count, degraded, result_ids, collections)
     SELECT e.query_hash,
            ARRAY(SELECT jsonb_array_elements_text(e.topics)),
            ARRAY(SELECT jsonb_array_elements_text(e.technologies)),
            e.mode, e.result_count, e.degraded,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(e.result_ids, '[]'::jsonb))::uuid),
            ARRAY(SELECT jsonb_array_elements_text(coalesce(e.collections, '[1]'::jsonb))::int)
       FROM jsonb_to_recordset($1::jsonb)
         AS e(query_hash text, topics jsonb, technologies jsonb, mode text, result_count int, degraded boolean, result_ids jsonb, collections jsonb)`,
    [JSON.stringify(events)],
  );
}

/** How often a long-lived writer deletes events past their retention. */
const PURGE_EVERY_MS = 24 * 3600 * 1000;

export class DirectSearchEvents implements SearchEventSink {
  private lastPurge = 0;

  /**
   * With `retentionDays`, a writer that lives across searches (a warm Lambda) also
   * deletes events older than that, at most once a day: retention then needs no
   * scheduler that would wake an idle database, because it only runs while searches do.
   */
  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
    private readonly retentionDays?: number,
  ) {}

  async record(event: SearchEvent): Promise<void> {
    try {
      await writeSearchEvents(this.sql, [event]);
    } catch (error) {
      // Analytics are not worth an agent's answer: the search stands, and the loss is counted.
      this.logger.warn('search_event_failed', { error: errorKind(error), events: 1 });
    }
    if (this.retentionDays !== undefined && Date.now() - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = Date.now();
      try {
        const purged = await purgeSearchEvents(this.sql, this.retentionDays);
        if (purged > 0) this.logger.info('search_events_purged', { purged, retention_days: this.retentionDays });
      } catch (error) {
        this.logger.warn('search_event_purge_failed', { error: errorKind(error) });
      }
    }
  }
}

export interface BufferOptions {
  /** Longest an event waits before it is written. @default 1000 */
  readonly flushMs?: number;
  /** Events that trigger a write before the timer. @default 500 */
  readonly maxBuffered?: number;
}

/**
 * Events written in batches: at most `flushMs` after the first buffered one, at
 * `maxBuffered` events, and on `close` (the server's shutdown drains it). A crash
 * loses at most the last `flushMs` of analytics, never a search answer.
 */
export class BufferedSearchEvents implements SearchEventSink {
  private buffer: SearchEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
    private readonly options: BufferOptions = {},
  ) {}

  async record(event: SearchEvent): Promise<void> {
    this.buffer.push(event);
    if (this.buffer.length >= (this.options.maxBuffered ?? 500)) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs ?? 1000).unref();
  }

  /** Writes what is buffered; resolves when every write started so far is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const events = this.buffer;
    this.buffer = [];
    if (events.length > 0) {
      this.writing = this.writing.then(() =>
        writeSearchEvents(this.sql, events).catch((error) => this.logger.warn('search_event_failed', { error: errorKind(error), events: events.length })),
      );
    }
    return this.writing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}
