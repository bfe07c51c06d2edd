/**
 * Loader for BEIR-format retrieval datasets (Thakur et al. 2021).
 *
 * A dataset folder holds:
 *   - corpus.jsonl   one JSON object a line: {"_id", "title", "text"}
 *   - queries.jsonl  one JSON object a line: {"_id", "text"}
 *   - qrels.tsv      header `query-id\tcorpus-id\tscore`, then one judgment a row;
 *                    some BEIR folders ship `qrels/test.tsv` instead (both are supported,
 *                    `qrels.tsv` wins when both exist).
 *
 * BEIR convention: only queries that have at least one qrels row are kept, in file order.
 * The corpus is streamed line by line, so large corpora do not need to fit in one string.
 */
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface BeirDoc {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

/** query id → (corpus id → graded relevance score). */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirDataset {
  /** The folder's base name, e.g. "scifact". */
  name: string;
  corpus: BeirDoc[];
  /** Only queries with qrels, in queries.jsonl order. */
  queries: BeirQuery[];
  qrels: Qrels;
}

const QRELS_CANDIDATES = ['qrels.tsv', join('qrels', 'test.tsv')];

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

async function requireFile(dir: string, file: string): Promise<string> {
  const path = join(dir, file);
  if (!(await exists(path))) {
    throw new Error(`BEIR dataset at ${dir}: missing ${file} (expected ${path})`);
  }
  return path;
}

/** Yields [lineNumber (1-based), line] for every non-blank line of a UTF-8 text file. */
async function* readLines(path: string): AsyncGenerator<[number, string]> {
  const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const raw of rl) {
      n += 1;
      // Strip a UTF-8 BOM on the first line and any stray CR.
      const line = (n === 1 ? raw.replace(/^\uFEFF/, '') : raw).trim();
      if (line.length > 0) yield [n, line];
    }
  } finally {
    rl.close();
  }
}

function parseJsonLine(path: string, lineNo: number, line: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new Error(`${path}:${lineNo}: invalid JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${path}:${lineNo}: expected a JSON object`);
  }
  return value as Record<string, unknown>;
}

function idOf(path: string, lineNo: number, obj: Record<string, unknown>): string {
  const id = obj._id;
  if (typeof id === 'string' && id.length > 0) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  throw new Error(`${path}:${lineNo}: missing or invalid "_id"`);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : value == null ? '' : String(value);
}

async function loadCorpus(path: string): Promise<BeirDoc[]> {
  const corpus: BeirDoc[] = [];
  for await (const [lineNo, line] of readLines(path)) {
    const obj = parseJsonLine(path, lineNo, line);
    corpus.push({ id: idOf(path, lineNo, obj), title: str(obj.title), text: str(obj.text) });
  }
  return corpus;
}

async function loadQueries(path: string): Promise<BeirQuery[]> {
  const queries: BeirQuery[] = [];
  for await (const [lineNo, line] of readLines(path)) {
    const obj = parseJsonLine(path, lineNo, line);
    queries.push({ id: idOf(path, lineNo, obj), text: str(obj.text) });
  }
  return queries;
}

async function loadQrels(path: string): Promise<Qrels> {
  const qrels: Qrels = new Map();
  let first = true;
  for await (const [lineNo, line] of readLines(path)) {
    const cols = line.split('\t');
    if (first) {
      first = false;
      // Header row (`query-id corpus-id score`); tolerate its absence.
      if (cols[0]?.trim().toLowerCase() === 'query-id') continue;
    }
    if (cols.length < 3) {
      throw new Error(`${path}:${lineNo}: expected 3 tab-separated columns (query-id, corpus-id, score)`);
    }
    const queryId = cols[0]!.trim();
    const docId = cols[1]!.trim();
    const score = Number(cols[2]!.trim());
    if (!queryId || !docId || !Number.isFinite(score)) {
      throw new Error(`${path}:${lineNo}: invalid qrels row ${JSON.stringify(line)}`);
    }
    let judged = qrels.get(queryId);
    if (!judged) {
      judged = new Map();
      qrels.set(queryId, judged);
    }
    judged.set(docId, score);
  }
  return qrels;
}

/**
 * Loads a BEIR dataset folder (with `options.corpus`, only its queries and qrels).
 * Throws an Error naming the missing file when corpus.jsonl,
 * queries.jsonl or the qrels file (qrels.tsv or qrels/test.tsv) is absent.
 */
export async function loadBeirDataset(dir: string, options: { corpus?: BeirDoc[] } = {}): Promise<BeirDataset> {
  const root = resolve(dir);
  // A caller that brings its own corpus (e.g. guidance records) needs no corpus.jsonl.
  const corpusPath = options.corpus ? undefined : await requireFile(root, 'corpus.jsonl');
  const queriesPath = await requireFile(root, 'queries.jsonl');
  let qrelsPath: string | undefined;
  for (const candidate of QRELS_CANDIDATES) {
    const path = join(root, candidate);
    if (await exists(path)) {
      qrelsPath = path;
      break;
    }
  }
  if (!qrelsPath) {
    throw new Error(
      `BEIR dataset at ${root}: missing qrels (expected ${QRELS_CANDIDATES.map((c) => join(root, c)).join(' or ')})`,
    );
  }

  const qrels = await loadQrels(qrelsPath);
  const allQueries = await loadQueries(queriesPath);
  const queries = allQueries.filter((q) => qrels.has(q.id));
  const corpus = options.corpus ?? (await loadCorpus(corpusPath!));
  return { name: basename(root), corpus, queries, qrels };
}
