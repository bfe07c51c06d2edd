/**
 * `Sql` over the Aurora (PostgreSQL) RDS Data API, the adapter used on AWS: it
 * sends each statement with ExecuteStatement and maps `transaction(work)` onto
 * Begin/Commit/RollbackTransaction. How a statement and its values are written
 * for the service, how its rows are read back, and the errors that may leave
 * (never with SQL text or parameter values) are `data-api-encoding.ts`; which
 * failures are tried again, and until when, is `data-api-retry.ts`.
 *
 * Does not own: the SQL itself (the core writes statements that run unchanged on
 * PGlite and here), credentials (the secret ARN is resolved by the Data API), the
 * cluster's lifecycle, or schema migrations (`migrations.ts` runs through this).
 */
import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  RDSDataClient,
  RollbackTransactionCommand,
} from '@aws-sdk/client-rds-data';
import type { QueryOptions, Sql, SqlParam } from '../ports/sql.ts';
import { DataApiError, decodeRecords, toStatement } from './data-api-encoding.ts';
import { SYSTEM_CLOCK, statementRetryPolicy, withRetries, type RetryClock, type RetryPolicy, type RetryTiming } from './data-api-retry.ts';

export interface DataApiSqlOptions {
  /** Defaults to a client with the SDK's own retries off (`maxAttempts: 1`): see `data-api-retry.ts`. */
  client?: RDSDataClient;
  resourceArn: string;
  secretArn: string;
  database: string;
  /**
   * The epoch millisecond after which no new attempt starts, read once per
   * statement: the time by which the running invocation must stop waiting and
   * answer (a Lambda sets it per invocation from its remaining time, see
   * `lambdas/aws/invocation-deadline.ts`). When absent or returning undefined,
   * `timeBudgetMs` counted from the first attempt applies instead.
   */
  deadline?: () => number | undefined;
  /** Longest time one statement (or BeginTransaction) may spend retrying when there is no deadline. @default 20000 */
  timeBudgetMs?: number;
  /** The clock the retries read and wait on; tests pass a fake one. @default SYSTEM_CLOCK */
  clock?: RetryClock;
  /** Jitter source in [0, 1). @default Math.random */
  random?: () => number;
}

/** What every call of one adapter shares: where it goes, and how long it may keep trying (`data-api-retry.ts`). */
interface Connection extends RetryTiming {
  readonly client: RDSDataClient;
  readonly resourceArn: string;
  readonly secretArn: string;
  readonly database: string;
}

/** Sends one command, tried again after the transient failures `policy` allows. */
function send<T>(connection: Connection, call: (client: RDSDataClient) => Promise<T>, policy: RetryPolicy): Promise<T> {
  return withRetries(connection, () => call(connection.client), policy);
}

async function execute<Row>(
  connection: Connection,
  text: string,
  params: readonly SqlParam[],
  transactionId: string | undefined,
  options: QueryOptions,
): Promise<Row[]> {
  const { sql, parameters } = toStatement(text, params);
  const output = await send(
    connection,
    (client) =>
      client.send(
        new ExecuteStatementCommand({
          resourceArn: connection.resourceArn,
          secretArn: connection.secretArn,
          database: connection.database,
          sql,
          parameters,
          transactionId,
          formatRecordsAs: 'JSON',
          resultSetOptions: { decimalReturnType: 'STRING', longReturnType: 'LONG' },
        }),
      ),
    statementRetryPolicy(sql, transactionId !== undefined),
  );
  try {
    return decodeRecords<Row>(output.formattedRecords, options);
  } catch {
    throw new DataApiError(undefined, 'UnreadableResult');
  }
}

/** The `Sql` handed to `transaction(work)`: bound to one open transaction, never retried. */
class DataApiTransaction implements Sql {
  private open = true;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly connection: Connection,
    readonly transactionId: string,
  ) {}

  query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    // One statement at a time per transaction, as on a single connection.
    const run = this.queue.then(() => {
      if (!this.open) throw new Error('This transaction has already ended.');
      return execute<Row>(this.connection, text, params, this.transactionId, options);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Nested transactions reuse the open one (no savepoints), as the PGlite adapter does. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return work(this);
  }

  /** Waits for the statements already queued, then refuses any more. */
  async close(): Promise<void> {
    await this.queue;
    this.open = false;
  }
}

export class DataApiSql implements Sql {
  private readonly connection: Connection;

  constructor(options: DataApiSqlOptions) {
    this.connection = {
      // The SDK's own retries would resend a statement after an ambiguous failure
      // (a reset connection, a 5xx), also inside a transaction, and would not know
      // the invocation's deadline; `send` retries instead (`data-api-retry.ts`).
      client: options.client ?? new RDSDataClient({ maxAttempts: 1 }),
      resourceArn: options.resourceArn,
      secretArn: options.secretArn,
      database: options.database,
      deadline: options.deadline ?? (() => undefined),
      timeBudgetMs: options.timeBudgetMs ?? 20_000,
      clock: options.clock ?? SYSTEM_CLOCK,
      random: options.random ?? Math.random,
    };
  }

  query<Row = Record<string, unknown>>(text: string, params: readonly SqlParam[] = [], options: QueryOptions = {}): Promise<Row[]> {
    return execute<Row>(this.connection, text, params, undefined, options);
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    const { resourceArn, secretArn, database } = this.connection;
    // BeginTransaction is the one call of a transaction that may be retried: nothing is open yet.
    const begun = await send(this.connection, (client) => client.send(new BeginTransactionCommand({ resourceArn, secretArn, database })), 'any');
    const transactionId = begun.transactionId;
    if (!transactionId) throw new DataApiError(undefined, 'NoTransactionId');
    const tx = new DataApiTransaction(this.connection, transactionId);
    const rollback = () =>
      send(this.connection, (client) => client.send(new RollbackTransactionCommand({ resourceArn, secretArn, transactionId })), 'none').catch(() => undefined);
    let result: T;
    try {
      result = await work(tx);
      await tx.close();
    } catch (error) {
      await tx.close().catch(() => undefined);
      await rollback();
      throw error;
    }
    try {
      await send(this.connection, (client) => client.send(new CommitTransactionCommand({ resourceArn, secretArn, transactionId })), 'none');
    } catch (error) {
      // The commit failed (Postgres has then rolled back, or the call never arrived):
      // make sure nothing stays open, and report the failure.
      await rollback();
      throw error;
    }
    return result;
  }
}
