/**
 * Reads guidance records from disk: one JSON file (an object or an array), a JSONL
 * file (one object per line), or a folder of such files. Every record is validated
 * before anything is returned, and every problem is reported with its file, line
 * and field, so an import either has all its records or none.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../errors/app-error.ts';
import { recordFileSchema, type RecordFile } from './record-schema.ts';

export interface RecordProblem {
  readonly where: string;
  readonly problem: string;
}

/** Records validated between two turns of the event loop, so a server validating an import keeps answering. */
const VALIDATE_BATCH = 100;

/** Validates parsed objects; `where(i)` names the i-th object for error messages. */
export async function validateRecords(items: readonly unknown[], where: (index: number) => string): Promise<RecordFile[]> {
  const problems: RecordProblem[] = [];
  const records: RecordFile[] = [];
  const seen = new Map<string, string>();
  for (const [index, item] of items.entries()) {
    if (index > 0 && index % VALIDATE_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
    const parsed = recordFileSchema.safeParse(item);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const path = issue.path.join('.');
        problems.push({ where: where(index), problem: `${path ? path + ': ' : ''}${issue.message}` });
      }
      continue;
    }
    const earlier = seen.get(parsed.data.slug);
    if (earlier) problems.push({ where: where(index), problem: `slug "${parsed.data.slug}" also appears in ${earlier}` });
    seen.set(parsed.data.slug, where(index));
    records.push(parsed.data);
  }
  if (problems.length > 0) {
    throw new ValidationError(`${problems.length} problem(s) in the records; nothing was imported.`, { problems });
  }
  return records;
}

/** The most one import reads: many thousands of records, far below what would strain memory. */
const MAX_IMPORT_BYTES = 64 * 2 ** 20;

interface Located {
  value: unknown;
  where: string;
}

function parseFile(name: string, text: string): Located[] {
  if (name.endsWith('.jsonl')) {
    const out: Located[] = [];
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        out.push({ value: JSON.parse(line), where: `${name}:${i + 1}` });
      } catch {
        throw new ValidationError(`${name}:${i + 1} is not valid JSON; nothing was imported.`, { file: name, line: i + 1 });
      }
    });
    return out;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError(`${name} is not valid JSON; nothing was imported.`, { file: name });
  }
  return Array.isArray(value) ? value.map((v, i) => ({ value: v, where: `${name}[${i}]` })) : [{ value, where: name }];
}

/** Reads every record object under `path` (file or folder, not recursive) without validating it. */
export async function readRecordSources(path: string): Promise<{ values: unknown[]; where: string[] }> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new ValidationError(`No file or folder at ${path}.`, { path });
  }
  const files = info.isDirectory()
    ? (await readdir(path, { withFileTypes: true }))
        .filter((entry) => entry.isFile() && (entry.name.endsWith('.json') || entry.name.endsWith('.jsonl')))
        .map((entry) => join(path, entry.name))
        .sort()
    : [path];
  if (files.length === 0) throw new ValidationError(`No .json or .jsonl files in ${path}.`, { path });
  const located: Located[] = [];
  let total = 0;
  for (const file of files) {
    // A FIFO would block the read forever and a device would never end: only regular files, and not too much.
    const fileInfo = await stat(file);
    if (!fileInfo.isFile()) throw new ValidationError(`${file} is not a regular file; nothing was imported.`, { path: file });
    total += fileInfo.size;
    if (total > MAX_IMPORT_BYTES) {
      throw new ValidationError(`The records under ${path} are larger than ${MAX_IMPORT_BYTES / 2 ** 20} MiB; import them in parts.`, { path });
    }
    located.push(...parseFile(file, await readFile(file, 'utf8')));
  }
  return { values: located.map((l) => l.value), where: located.map((l) => l.where) };
}

/** Loads and validates every record under `path`. */
export async function readRecordFiles(path: string): Promise<RecordFile[]> {
  const { values, where } = await readRecordSources(path);
  return validateRecords(values, (i) => where[i]!);
}
