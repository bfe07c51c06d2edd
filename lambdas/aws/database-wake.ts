/**
 * Starts waking a paused Aurora Serverless v2 cluster when a client begins a
 * session, without making the handshake wait for it.
 *
 * Owns: recognising a handshake POST (`initialize` or `tools/list`), sending one
 * cheap statement for it (a single attempt: its `DatabaseResumingException` is the
 * point, since the Data API starts the resume when a request arrives), at most once
 * per `intervalMs` per warm instance, and giving that request up to `graceMs` to
 * leave the process after the answer is ready (a Lambda may be frozen as soon as
 * it returns, and a request still inside the process would then never arrive).
 *
 * Does not own: authentication (a keyed handshake still looks its key up, which
 * waits for the cluster within the invocation's deadline; see `invocation-deadline.ts`),
 * or anything a GET stream does: GET never wakes the cluster, or every connected
 * client would keep it from pausing.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Sql } from '../ports/sql.ts';
import type { Logger } from '../ports/logger.ts';
import type { RetryClock } from '../storage/data-api-retry.ts';
import { errorKind, silentLogger } from '../observability/logger.ts';
import { INVOCATION_CLOCK } from './invocation-deadline.ts';

export interface DatabaseWakeOptions {
  /** A connection that makes one attempt per statement (no retries). */
  readonly sql: Sql;
  /** Least time between two wake statements from one instance. @default 60000 */
  readonly intervalMs?: number;
  /** Longest time the answer waits for the wake request to go out. @default 250 */
  readonly graceMs?: number;
  /** @default the invocation's clock */
  readonly clock?: RetryClock;
  readonly logger?: Logger;
}

const HANDSHAKE_METHODS = new Set(['initialize', 'tools/list']);

/** True for a POST whose body is one `initialize` or `tools/list` message. */
export function isHandshake(event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'body' | 'isBase64Encoded'>): boolean {
  if (event.httpMethod !== 'POST' || !event.body) return false;
  try {
    const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const message = JSON.parse(text) as { method?: unknown };
    return typeof message?.method === 'string' && HANDSHAKE_METHODS.has(message.method);
  } catch {
    return false;
  }
}

export class DatabaseWake {
  private readonly sql: Sql;
  private readonly intervalMs: number;
  private readonly graceMs: number;
  private readonly clock: RetryClock;
  private readonly logger: Logger;
  private lastStarted = Number.NEGATIVE_INFINITY;

  constructor(options: DatabaseWakeOptions) {
    this.sql = options.sql;
    this.intervalMs = options.intervalMs ?? 60_000;
    this.graceMs = options.graceMs ?? 250;
    this.clock = options.clock ?? INVOCATION_CLOCK;
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * For a handshake, sends the wake statement without awaiting it and returns a
   * function that waits at most `graceMs` for it; otherwise undefined.
   */
  start(event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'body' | 'isBase64Encoded'>): (() => Promise<void>) | undefined {
    if (!isHandshake(event)) return undefined;
    const now = this.clock.now();
    if (now - this.lastStarted < this.intervalMs) return undefined;
    this.lastStarted = now;
    let settled = false;
    const sent = this.sql
      .query('SELECT 1 AS awake')
      .then(
        () => undefined,
        // A resuming cluster answers this with an error: that is the wake-up, not a failure.
        (error: unknown) => this.logger.info('database_wake', { outcome: errorKind(error) }),
      )
      .finally(() => (settled = true));
    return () => (settled ? Promise.resolve() : Promise.race([sent, this.clock.sleep(this.graceMs)]));
  }
}
