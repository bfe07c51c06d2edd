/**
 * `chatctx --remote FUNCTION records import …` for imports of any size: the admin
 * Lambda is invoked synchronously, whose request payload is limited to 6 MB, so
 * the records are sent in chunks that each serialize under `maxChunkBytes`, in
 * file order, one Invoke after the other, and the answers are added up into one
 * `ImportResult`.
 *
 * What changes against a single import (the local path): each chunk is its own
 * transaction. A failure in a later chunk leaves the earlier ones imported; the
 * error says which records landed, and importing the same files again is safe
 * (unchanged records stay unchanged). `--override` applies per chunk: a chunk
 * gets the overrides its own records need, as the quality gates (asked first,
 * also in chunks) report them, so an override is not refused by a chunk that
 * happens to hold no record failing that gate.
 *
 * Does not own: the admin operations (`admin/admin-operations.ts`) or the Invoke
 * (`remote-admin.ts`). Other commands go through unchanged.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { AppError, ValidationError } from '../errors/app-error.ts';
import type { AdminCommand, ImportResult } from '../admin/admin-operations.ts';
import type { GateReport } from '../records/quality-gates.ts';
import { runRemoteAdmin } from './remote-admin.ts';

type ImportCommand = Extract<AdminCommand, { op: 'records.import' }>;

/** The synchronous Invoke request limit is 6 MB (6,291,456 bytes); a chunk stays well under it. */
export const MAX_CHUNK_BYTES = 5 * 1024 * 1024;
/**
 * Records per chunk at most, whatever their size: the answer (a gate report per
 * record) is limited to 6 MB as well, and one chunk is one transaction of the admin
 * function, whose time is limited too.
 */
export const MAX_CHUNK_RECORDS = 1_000;

export interface RemoteImportOptions {
  readonly client?: LambdaClient;
  /** @default MAX_CHUNK_BYTES */
  readonly maxChunkBytes?: number;
  /** @default MAX_CHUNK_RECORDS */
  readonly maxChunkRecords?: number;
  /** Told before each chunk is sent (only when there is more than one). */
  readonly onChunk?: (chunk: { index: number; count: number; first: number; last: number }) => void;
}

/** One chunk: the records `[start, end)` of the import. */
interface Chunk {
  readonly start: number;
  readonly end: number;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Splits the records into consecutive chunks whose command (the envelope with the
 * largest overrides it could carry) serializes under `maxBytes`. A record that
 * cannot fit even alone is a `ValidationError` naming it, before anything is sent.
 */
export function chunkImport(command: ImportCommand, maxBytes = MAX_CHUNK_BYTES, maxRecords = MAX_CHUNK_RECORDS): Chunk[] {
  const envelope = bytes({ ...command, records: [], where: [] });
  const chunks: Chunk[] = [];
  let start = 0;
  let size = envelope;
  command.records.forEach((record, i) => {
    // A comma between array items, for the record and for its `where` entry.
    const cost = bytes(record) + (command.where ? bytes(command.where[i] ?? '') + 1 : 0) + 1;
    if (envelope + cost > maxBytes) {
      const where = command.where?.[i] ?? `record ${i + 1}`;
      throw new ValidationError(
        `${where} is ${cost} bytes as JSON, more than one remote import request can carry (${maxBytes} bytes with the command around it). ` +
          'Shorten it, or import it on the server that holds the data directory.',
        { where, bytes: cost, limit: maxBytes },
      );
    }
    if (i > start && (size + cost > maxBytes || i - start >= maxRecords)) {
      chunks.push({ start, end: i });
      start = i;
      size = envelope;
    }
    size += cost;
  });
  if (command.records.length > start) chunks.push({ start, end: command.records.length });
  return chunks;
}

const slice = (command: ImportCommand, chunk: Chunk) => ({
  records: command.records.slice(chunk.start, chunk.end),
  ...(command.where ? { where: command.where.slice(chunk.start, chunk.end) } : {}),
});

/** Runs any admin command remotely; a `records.import` too large for one request is sent in chunks. */
export async function runRemoteCommand(functionName: string, command: AdminCommand, options: RemoteImportOptions = {}): Promise<unknown> {
  const client = options.client ?? new LambdaClient({});
  if (command.op !== 'records.import') return runRemoteAdmin(functionName, command, client);
  const chunks = chunkImport(command, options.maxChunkBytes, options.maxChunkRecords);
  if (chunks.length === 1) return runRemoteAdmin(functionName, command, client);
  const overrides = await overridesPerChunk(functionName, command, chunks, client);
  const results: ImportResult[] = [];
  for (const [index, chunk] of chunks.entries()) {
    options.onChunk?.({ index: index + 1, count: chunks.length, first: chunk.start + 1, last: chunk.end });
    try {
      const part = { ...command, ...slice(command, chunk), overrides: overrides[index] } as ImportCommand;
      results.push((await runRemoteAdmin(functionName, part, client)) as ImportResult);
    } catch (error) {
      throw partialFailure(error, chunks, index);
    }
  }
  return sumResults(results);
}

/** The overrides each chunk needs: those of its records' gates that did not pass. Unused ones go with the first chunk, to be refused there. */
async function overridesPerChunk(functionName: string, command: ImportCommand, chunks: readonly Chunk[], client: LambdaClient) {
  const overrides = command.overrides ?? [];
  if (overrides.length === 0) return chunks.map(() => []);
  const needed: Set<string>[] = [];
  for (const chunk of chunks) {
    const reports = (await runRemoteAdmin(functionName, { op: 'records.gates', ...slice(command, chunk) }, client)) as GateReport[];
    needed.push(new Set(reports.flatMap((report) => report.gates.filter((gate) => gate.verdict !== 'pass').map((gate) => gate.code))));
  }
  const unused = overrides.filter((o) => !needed.some((gates) => gates.has(o.gate)));
  return needed.map((gates, i) => [...overrides.filter((o) => gates.has(o.gate)), ...(i === 0 ? unused : [])]);
}

/** The error of chunk `index`, saying which records were imported before it. */
function partialFailure(error: unknown, chunks: readonly Chunk[], index: number): AppError {
  const failed = chunks[index]!;
  const cause = error instanceof AppError ? error : new AppError('internal', 'The admin function failed.', {}, { cause: error });
  const landed = index === 0 ? 'Nothing was imported.' : `Records 1–${failed.start} (chunks 1–${index}) were imported and stay.`;
  return new AppError(
    cause.code,
    `Chunk ${index + 1} of ${chunks.length} (records ${failed.start + 1}–${failed.end}) failed: ${cause.message} ${landed} ` +
      'Importing the same files again after fixing the problem is safe: records already imported stay unchanged.',
    { ...cause.details, chunk: index + 1, chunks: chunks.length, imported_records: failed.start },
    { cause },
  );
}

/** One `ImportResult` from the chunks' results, in order. */
export function sumResults(results: readonly ImportResult[]): ImportResult {
  const counts = ['created', 'updated', 'unchanged', 'approved', 'candidates', 'deprecated', 'staged'] as const;
  const total = Object.fromEntries(counts.map((field) => [field, results.reduce((sum, r) => sum + r[field], 0)])) as Record<(typeof counts)[number], number>;
  const skipped = results.find((r) => r.embedding.skipped_reason)?.embedding.skipped_reason;
  return {
    ...total,
    slugs: results.flatMap((r) => r.slugs),
    changed_ids: results.flatMap((r) => r.changed_ids),
    gates: results.flatMap((r) => r.gates),
    embedding: { embedded: results.reduce((sum, r) => sum + r.embedding.embedded, 0), ...(skipped ? { skipped_reason: skipped } : {}) },
  };
}
