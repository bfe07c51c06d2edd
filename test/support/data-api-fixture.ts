/**
 * A stand-in for the Aurora RDS Data API on 127.0.0.1 (ephemeral port), backed by
 * in-memory PGlite + pgvector, so tests can drive the real AWS SDK client (and the
 * `DataApiSql` adapter) against real Postgres. Nothing leaves the machine and no
 * AWS credentials are needed.
 *
 * Owns the REST surface the SDK v3 client calls (`POST /Execute`,
 * `/BeginTransaction`, `/CommitTransaction`, `/RollbackTransaction`) and mimics
 * the service where the adapter depends on it:
 * - named parameters (`:name`, not inside literals, quoted identifiers, comments,
 *   dollar quotes, and not the `::` cast) become positional `$n`, bound with the
 *   types the service's driver uses: stringValue → varchar (or the `typeHint`
 *   type: UUID, JSON, TIMESTAMP, DATE, TIME, DECIMAL), longValue → bigint,
 *   doubleValue → float8, booleanValue → boolean, blobValue → bytea, isNull →
 *   untyped; so an uncast string compared with a uuid column fails here as there;
 * - `formatRecordsAs: 'JSON'` results: json/jsonb as their text, timestamps as
 *   `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC (no zone), dates as `YYYY-MM-DD`, uuid
 *   and vector as text, arrays as JSON arrays, numeric as a string (or a number
 *   with `decimalReturnType: 'DOUBLE_OR_LONG'`), bytea as base64;
 * - errors: HTTP 400 with `x-amzn-errortype` and `{ message }`, SQL errors as
 *   `BadRequestException` with "ERROR: … Detail: …; SQLState: XXXXX" (the detail
 *   can hold parameter values, as on the real service).
 *
 * Does not own: `BatchExecute`, `ExecuteSql`, the typed `records` result format,
 * array parameters, result size limits, or transaction idle timeouts. PGlite has
 * one connection, so a transaction holds it from Begin to Commit/Rollback and
 * every other statement waits (at most `lockTimeoutMs`, then fails) — stricter
 * isolation than Aurora, where each transaction has its own connection.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { SETTINGS } from '../../lambdas/config/settings.ts';
import { listen } from '../../lambdas/local/listen.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { PGlite, types } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

export interface DataApiCall {
  sql: string;
  parameters: unknown[];
  transactionId?: string;
}

export interface DataApiFixture {
  endpoint: string;
  db: PGlite;
  /** Every Execute request received (including ones failed by `failNext`), in order. */
  calls: DataApiCall[];
  /** Every request's operation name, in order (Execute, BeginTransaction, …). */
  operations: string[];
  /** Makes the next `n` requests of the given operations (default: Execute) fail with this error. */
  failNext(n: number, errorType: string, message: string, operations?: readonly string[]): void;
  /** Closes the connection of the next `n` Execute requests without an answer (the client sees ECONNRESET). */
  dropNext(n: number): void;
  /** Forgets every pending `failNext` and `dropNext`. */
  clearFailures(): void;
  close(): Promise<void>;
}

class ServiceError extends Error {
  constructor(
    readonly errorType: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

interface Field {
  stringValue?: string;
  longValue?: number;
  doubleValue?: number;
  booleanValue?: boolean;
  isNull?: boolean;
  blobValue?: string;
  arrayValue?: unknown;
}

interface Parameter {
  name?: string;
  value?: Field;
  typeHint?: string;
}

const TYPE_HINTS: Record<string, number> = {
  UUID: types.UUID,
  JSON: types.JSON,
  TIMESTAMP: types.TIMESTAMP,
  DATE: types.DATE,
  TIME: types.TIME,
  DECIMAL: types.NUMERIC,
};

/** Rewrites `:name` placeholders to `$n`; returns the names in `$n` order. */
export function toPositional(text: string): { sql: string; names: string[] } {
  const names: string[] = [];
  let out = '';
  let i = 0;
  const n = text.length;
  const identStart = /[A-Za-z_]/;
  const identChar = /[A-Za-z0-9_$]/;
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    let end = i + 1;
    if (c === "'") {
      const escapes = (text[i - 1] === 'E' || text[i - 1] === 'e') && !identChar.test(text[i - 2] ?? ' ');
      end = i + 1;
      while (end < n) {
        if (escapes && text[end] === '\\') end += 2;
        else if (text[end] === "'" && text[end + 1] === "'") end += 2;
        else if (text[end] === "'") break;
        else end += 1;
      }
      end += 1;
    } else if (c === '"') {
      end = i + 1;
      while (end < n && !(text[end] === '"' && text[end + 1] !== '"')) end += text[end] === '"' ? 2 : 1;
      end += 1;
    } else if (c === '-' && next === '-') {
      const newline = text.indexOf('\n', i);
      end = newline === -1 ? n : newline;
    } else if (c === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      end = close === -1 ? n : close + 2;
    } else if (c === '$' && !identChar.test(text[i - 1] ?? ' ')) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 70));
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        end = close === -1 ? n : close + tag[0].length;
      }
    } else if (c === ':' && next === ':') {
      end = i + 2;
    } else if (c === ':' && next !== undefined && identStart.test(next)) {
      let j = i + 1;
      while (j < n && identChar.test(text[j]!)) j += 1;
      const name = text.slice(i + 1, j);
      let index = names.indexOf(name);
      if (index === -1) index = names.push(name) - 1;
      out += `$${index + 1}`;
      i = j;
      continue;
    }
    out += text.slice(i, end);
    i = end;
  }
  return { sql: out, names };
}

function bindParameter(parameter: Parameter): { value: unknown; type: number } {
  const field = parameter.value ?? {};
  if (field.isNull) return { value: null, type: 0 };
  if (field.stringValue !== undefined) {
    const hinted = parameter.typeHint ? TYPE_HINTS[parameter.typeHint] : undefined;
    return { value: field.stringValue, type: hinted ?? types.VARCHAR };
  }
  if (field.longValue !== undefined) return { value: field.longValue, type: types.INT8 };
  if (field.doubleValue !== undefined) return { value: field.doubleValue, type: types.FLOAT8 };
  if (field.booleanValue !== undefined) return { value: field.booleanValue, type: types.BOOL };
  if (field.blobValue !== undefined) return { value: Uint8Array.from(Buffer.from(field.blobValue, 'base64')), type: types.BYTEA };
  if (field.arrayValue !== undefined) throw new ServiceError('BadRequestException', 'Array parameters are not supported.');
  throw new ServiceError('BadRequestException', `Parameter ${parameter.name ?? '?'} has no value.`);
}

const raw = (value: string) => value;
/** Types whose PGlite parsing is replaced by the Postgres text form, formatted below. */
const RAW_PARSERS = {
  [types.JSON]: raw,
  [types.JSONB]: raw,
  [types.TIMESTAMP]: raw,
  [types.TIMESTAMPTZ]: raw,
  [types.DATE]: raw,
  [types.TIME]: raw,
  [types.TIMETZ]: raw,
  [types.NUMERIC]: raw,
  [types.INTERVAL]: raw,
};

function formatValue(value: unknown, type: number, decimalAsNumber: boolean): unknown {
  if (value === null || value === undefined) return null;
  // The session runs in UTC; timestamptz text then ends in "+00", which the service drops.
  if (type === types.TIMESTAMPTZ && typeof value === 'string') return value.replace(/\+00$/, '');
  if (type === types.NUMERIC && typeof value === 'string') return decimalAsNumber ? Number(value) : value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString().replace('T', ' ').replace('Z', '');
  return value;
}

interface OpenTransaction {
  release: () => void;
  queue: Promise<unknown>;
}

/** A FIFO lock over the single PGlite connection. */
function createLock(timeoutMs: number) {
  let tail: Promise<void> = Promise.resolve();
  return function acquire(): Promise<() => void> {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const turn = tail;
    tail = tail.then(() => done);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        reject(new ServiceError('StatementTimeoutException', `fixture: waited ${timeoutMs} ms for another open transaction`));
      }, timeoutMs);
      void turn.then(() => {
        clearTimeout(timer);
        if (timedOut) release();
        else resolve(release);
      });
    });
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sqlError(error: unknown): ServiceError {
  const e = error as { message?: string; code?: string; detail?: string };
  const detail = e.detail ? `\n  Detail: ${e.detail}` : '';
  return new ServiceError('BadRequestException', `ERROR: ${e.message ?? 'unknown error'}${detail}; SQLState: ${e.code ?? 'XX000'}`);
}

/** `from`: a `dumpDataDir` tarball to start from instead of an empty cluster. */
export async function startDataApiFixture(options: { lockTimeoutMs?: number; from?: Blob } = {}): Promise<DataApiFixture> {
  const db = await PGlite.create({ loadDataDir: options.from, extensions: { vector } });
  await db.exec("SET TimeZone TO 'UTC'");
  const acquire = createLock(options.lockTimeoutMs ?? 10_000);
  const transactions = new Map<string, OpenTransaction>();
  const calls: DataApiCall[] = [];
  const operations: string[] = [];
  const failures: { remaining: number; errorType: string; message: string; operations: readonly string[] }[] = [];

  async function runStatement(body: Record<string, unknown>): Promise<object> {
    const { sql, names } = toPositional(String(body.sql));
    const byName = new Map(((body.parameters as Parameter[] | undefined) ?? []).map((p) => [p.name, p]));
    const bound = names.map((name) => {
      const parameter = byName.get(name);
      if (!parameter) throw new ServiceError('BadRequestException', `No value specified for parameter: ${name}`);
      return bindParameter(parameter);
    });
    let result;
    try {
      result = await db.query<Record<string, unknown>>(
        sql,
        bound.map((b) => b.value),
        { paramTypes: bound.map((b) => b.type), parsers: RAW_PARSERS },
      );
    } catch (error) {
      throw sqlError(error);
    }
    const numberOfRecordsUpdated = result.affectedRows ?? 0;
    if (body.formatRecordsAs !== 'JSON') {
      if (result.fields.length > 0) throw new ServiceError('BadRequestException', 'fixture: only formatRecordsAs JSON is implemented');
      return { numberOfRecordsUpdated };
    }
    const decimalAsNumber = (body.resultSetOptions as { decimalReturnType?: string } | undefined)?.decimalReturnType === 'DOUBLE_OR_LONG';
    const rows = result.rows.map((row) => {
      const formatted: Record<string, unknown> = {};
      for (const field of result.fields) formatted[field.name] = formatValue(row[field.name], field.dataTypeID, decimalAsNumber);
      return formatted;
    });
    return { formattedRecords: JSON.stringify(rows), numberOfRecordsUpdated };
  }

  function transaction(id: unknown): OpenTransaction {
    const open = typeof id === 'string' ? transactions.get(id) : undefined;
    if (!open) throw new ServiceError('BadRequestException', `Transaction ${String(id)} is not found`);
    return open;
  }

  /** Runs `work` after the statements already sent in this transaction. */
  function inTransaction<T>(open: OpenTransaction, work: () => Promise<T>): Promise<T> {
    const run = open.queue.then(work);
    open.queue = run.catch(() => undefined);
    return run;
  }

  const handlers: Record<string, (body: Record<string, unknown>) => Promise<object>> = {
    async '/Execute'(body) {
      calls.push({ sql: String(body.sql), parameters: (body.parameters as unknown[] | undefined) ?? [], transactionId: body.transactionId as string | undefined });
      failIfAsked('Execute');
      if (!body.resourceArn || !body.secretArn || typeof body.sql !== 'string') {
        throw new ServiceError('BadRequestException', 'resourceArn, secretArn and sql are required');
      }
      if (body.transactionId !== undefined) {
        const open = transaction(body.transactionId);
        return inTransaction(open, () => runStatement(body));
      }
      const release = await acquire();
      try {
        return await runStatement(body);
      } finally {
        release();
      }
    },
    async '/BeginTransaction'() {
      failIfAsked('BeginTransaction');
      const release = await acquire();
      try {
        await db.exec('BEGIN');
      } catch (error) {
        release();
        throw sqlError(error);
      }
      const transactionId = randomUUID();
      transactions.set(transactionId, { release, queue: Promise.resolve() });
      return { transactionId };
    },
    async '/CommitTransaction'(body) {
      failIfAsked('CommitTransaction');
      const open = transaction(body.transactionId);
      transactions.delete(body.transactionId as string);
      try {
        await inTransaction(open, () => db.exec('COMMIT'));
      } catch (error) {
        await db.exec('ROLLBACK').catch(() => undefined);
        throw sqlError(error);
      } finally {
        open.release();
      }
      return { transactionStatus: 'Transaction Committed' };
    },
    async '/RollbackTransaction'(body) {
      failIfAsked('RollbackTransaction');
      const open = transaction(body.transactionId);
      transactions.delete(body.transactionId as string);
      try {
        await inTransaction(open, () => db.exec('ROLLBACK'));
      } finally {
        open.release();
      }
      return { transactionStatus: 'Rollback Complete' };
    },
  };

  function failIfAsked(operation: string): void {
    const failure = failures.find((f) => f.remaining > 0 && f.operations.includes(operation));
    if (!failure) return;
    failure.remaining -= 1;
    throw new ServiceError(failure.errorType, failure.message);
  }

  let drops = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0]!;
    if (drops > 0 && path === '/Execute') {
      drops -= 1;
      const text = await readBody(req);
      calls.push({ sql: String((JSON.parse(text) as { sql?: unknown }).sql), parameters: [], transactionId: undefined });
      req.socket.destroy();
      return;
    }
    const handler = req.method === 'POST' ? handlers[path] : undefined;
    let status = 200;
    let payload: object;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    try {
      const text = await readBody(req);
      if (!handler) throw new ServiceError('UnknownOperationException', `No operation at ${req.method} ${path}`, 404);
      operations.push(path.slice(1));
      payload = await handler(text ? (JSON.parse(text) as Record<string, unknown>) : {});
    } catch (error) {
      const serviceError = error instanceof ServiceError ? error : new ServiceError('InternalServerErrorException', 'fixture failure', 500);
      status = serviceError.status;
      headers['x-amzn-errortype'] = serviceError.errorType;
      payload = { message: serviceError.message };
    }
    res.writeHead(status, headers).end(JSON.stringify(payload));
  }

  const server = createServer((req, res) => void handle(req, res));
  await listen(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    db,
    calls,
    operations,
    failNext(n, errorType, message, ops = ['Execute']) {
      failures.push({ remaining: n, errorType, message, operations: ops });
    },
    dropNext(n) {
      drops = n;
    },
    clearFailures() {
      failures.length = 0;
      drops = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      await db.close();
    },
  };
}

/** The Data API adapter against `fixture`, as the migrate and admin functions use it (the master user's secret). */
export function fixtureSql(fixture: DataApiFixture): DataApiSql {
  return new DataApiSql({
    client: new RDSDataClient({ endpoint: fixture.endpoint, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' } }),
    resourceArn: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx',
    secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:master',
    database: 'chatctx',
  });
}

/**
 * The environment the admin Lambda's entry reads, pointed at this fixture: test
 * credentials, the cluster, secret and database names, and no embeddings. Tests that
 * run the real admin handler behind a mocked Invoke (the remote CLI, the remote
 * console) apply it with `Object.assign(process.env, …)`.
 */
export function adminFunctionEnv(fixture: DataApiFixture): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_RDS_DATA: fixture.endpoint,
    POWERTOOLS_METRICS_DISABLED: 'true',
    [SETTINGS.dbClusterArn.env]: 'arn:aws:rds:us-east-1:123456789012:cluster:chatctx',
    [SETTINGS.dbSecretArn.env]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:db',
    [SETTINGS.dbName.env]: 'chatctx',
    [SETTINGS.pepperSecretArn.env]: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:pepper',
    [SETTINGS.embeddings.env]: 'none',
  };
}
