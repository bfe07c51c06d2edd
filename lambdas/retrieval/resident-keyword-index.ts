/**
 * The keyword index held in the local server's memory (`keyword-snapshot.ts` scores it)
 * and, on a store of at most RESIDENT_PASSAGES passages, its passage vectors
 * (`passage-snapshot.ts`), with the vectors of recent questions by their cache key.
 *
 * A snapshot belongs to one corpus generation: every change a search can see moves
 * `corpus_stats.generation` on in its own transaction (schema/002_search_functions.sql),
 * so a snapshot whose generation is the one a search just read holds exactly what the
 * store's statement would read. A search that finds none for its generation is answered
 * by the statement, as before, and starts one load in the background; nothing is ever
 * answered from a stale copy.
 *
 * The load reads the side tables a chunk of records at a time, so searches and imports
 * go on between its statements (PGlite runs one statement at a time), and reads the
 * generation before and after: when they differ, something changed in between and the
 * copy is thrown away (the next search starts another). The starter corpus loads in about
 * 25 ms of the store's thread (its 1,458 passage vectors in about 20 ms more), 5,000 SciFact records in about one second and 20,000 in five
 * to eight (bench:keyword-scale), each statement a chunk of 2,000 records.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Sql } from '../ports/sql.ts';
import type { Logger } from '../ports/logger.ts';
import { KeywordSnapshot, type Postings, type ResidentQuery } from './keyword-snapshot.ts';
import { PassageSnapshot, RESIDENT_PASSAGES, squaredNorm } from './passage-snapshot.ts';
import { corpusGeneration } from './search-cache.ts';

/** Records read per statement while loading. */
const CHUNK = 2000;
/**
 * Passage vectors read per statement: each chunk is decoded on the event loop between
 * statements, so a small chunk keeps any one stop short (500 vectors: a few milliseconds).
 */
const PASSAGE_CHUNK = 500;

export interface ResidentKeywordIndexOptions {
  readonly logger?: Logger;
  /** Analysed texts kept (a question and its groups; their lexemes, by a hash of the text). @default 10000 */
  readonly analyses?: number;
  /** Query vectors kept, by their cache key (2 KiB each). @default 2000 */
  readonly vectors?: number;
}

/**
 * How long a query vector is kept in memory: the store notes an embedding's last use at
 * most hourly (chatctx_query_vector), and a vector read again after an hour lets it, so
 * the embedding cache's retention still sees the questions asked.
 */
const VECTOR_TTL_MS = 60 * 60 * 1000;

/** Least time between the starts of two background loads (see `startLoad`). */
const LOAD_GAP_MS = 1000;
/** How long the corpus generation must stay the same before a background load starts (see `startLoad`). */
const QUIET_MS = 1000;

/** Resolves after `ms` (at once for 0), on a timer that does not keep the process alive: the server's own handles do. */
const pause = (ms: number) => (ms <= 0 ? Promise.resolve() : new Promise<void>((resolve) => setTimeout(resolve, ms).unref()));

export class ResidentKeywordIndex {
  private snapshot: KeywordSnapshot | undefined;
  private loading: Promise<void> | undefined;
  private readonly analyses: LRUCache<string, readonly string[]>;
  private readonly vectors: LRUCache<string, Float32Array>;
  private lastStart = -Infinity;
  /** The newest generation a search asked for, and when it was first asked for. */
  private seen = { generation: Number.NaN, at: -Infinity };

  constructor(private readonly sql: Sql, private readonly options: ResidentKeywordIndexOptions = {}) {
    this.analyses = new LRUCache({ max: options.analyses ?? 10_000 });
    this.vectors = new LRUCache({ max: options.vectors ?? 2000, ttl: VECTOR_TTL_MS });
  }

  /** The snapshot of `generation`, or undefined (and a load started) when there is none yet. */
  forGeneration(generation: number): KeywordSnapshot | undefined {
    if (this.snapshot?.generation === generation) return this.snapshot;
    if (generation !== this.seen.generation) this.seen = { generation, at: Date.now() };
    this.startLoad(true);
    return undefined;
  }

  /** Loads now (tests, benchmarks, warm-up); resolves with the snapshot or undefined when the store changed meanwhile. */
  async load(): Promise<KeywordSnapshot | undefined> {
    this.startLoad(false);
    await this.loading;
    return this.snapshot;
  }

  /**
   * Starts a load unless one is under way. `spaced` (a load a search asked for): it starts
   * once the generation searches ask for has stayed the same for QUIET_MS, and at least
   * LOAD_GAP_MS after the last load started. During an import every chunk is a new corpus
   * generation: reading each one's copy kept the store's thread and the event loop busy
   * (pings during a 500-record import waited up to 130 ms behind a copy being decoded) for
   * copies out of date before they were used. Searches meanwhile are answered by the
   * statement either way.
   */
  private startLoad(spaced: boolean): void {
    if (this.loading) return;
    let started = 0;
    this.loading = (spaced ? this.quiet() : Promise.resolve())
      .then(() => {
        started = this.lastStart = Date.now();
        return loadSnapshot(this.sql);
      })
      .then((s) => {
        if (s) this.snapshot = s;
        this.options.logger?.info('keyword_index', s
          ? {
              outcome: 'loaded', generation: s.generation, records: s.data.ids.length, words: s.data.postings.size,
              // Passage vectors held (none above RESIDENT_PASSAGES: the store's index answers the dense side).
              passages: s.passages?.passages ?? 0, ms: Date.now() - started,
            }
          : { outcome: 'changed_while_loading', ms: Date.now() - started });
      })
      .catch((err: unknown) => {
        // The statement still answers; the next search tries again.
        this.options.logger?.warn('keyword_index', { outcome: 'failed', error: err instanceof Error ? err.name : 'unknown' });
      })
      .finally(() => {
        this.loading = undefined;
      });
  }

  /** Resolves once the generation asked for has stayed the same for QUIET_MS and LOAD_GAP_MS has passed since the last load started. */
  private async quiet(): Promise<void> {
    for (;;) {
      const wait = Math.max(this.lastStart + LOAD_GAP_MS, this.seen.at + QUIET_MS) - Date.now();
      if (wait <= 0) return;
      await pause(wait);
    }
  }

  /** The lexemes of each text (to_tsvector('english', …)), from memory where this text was analysed before. */
  async analyse(texts: readonly string[]): Promise<(readonly string[])[]> {
    const keys = texts.map((t) => createHash('sha256').update(t).digest('base64'));
    const missing = new Map<string, string>();
    keys.forEach((key, i) => this.analyses.has(key) || missing.set(key, texts[i]!));
    if (missing.size > 0) {
      const rows = await this.sql.query<{ lexemes: string[] }>(
        `SELECT ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', t.text)) u) AS lexemes
           FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY AS t(text, i) ORDER BY t.i`,
        [JSON.stringify([...missing.values()])],
      );
      [...missing.keys()].forEach((key, i) => this.analyses.set(key, rows[i]?.lexemes ?? []));
    }
    return keys.map((k) => this.analyses.get(k) ?? []);
  }

  /**
   * The query's vector as the store holds it: a new one (a literal) is stored under its key
   * first, as the search statement would have; a cached one comes from memory, or from
   * the store (in binary, exactly) when not kept here. Undefined when the key is unknown.
   */
  async queryVector(vector: { readonly cacheKey?: string; readonly literal?: string }): Promise<Float32Array | undefined> {
    if (vector.literal !== undefined) {
      // The store parses the same literal (single precision, nearest): Float32Array rounds alike.
      const values = Float32Array.from(vector.literal.slice(1, -1).split(','), Number);
      if (vector.cacheKey !== undefined) {
        await this.sql.query('SELECT chatctx_query_vector($1::vector, $2) IS NULL AS missing', [vector.literal, vector.cacheKey]);
        this.vectors.set(vector.cacheKey, values);
      }
      return values;
    }
    const key = vector.cacheKey;
    if (key === undefined) return undefined;
    const kept = this.vectors.get(key);
    if (kept) return kept;
    const [row] = await this.sql.query<{ v: string | null }>(`SELECT encode(vector_send(chatctx_query_vector(NULL::vector, $1)), 'base64') AS v`, [key]);
    if (!row?.v) return undefined;
    const values = decodeVector(Buffer.from(row.v, 'base64'));
    this.vectors.set(key, values);
    return values;
  }

  /** The question and its weighted groups as the snapshot searches them. */
  async query(text: string, groups: readonly { readonly text: string; readonly weight: number }[]): Promise<ResidentQuery> {
    const [lexemes, ...grouped] = await this.analyse([text, ...groups.map((g) => g.text)]);
    return { lexemes: lexemes!, groups: groups.map((g, i) => ({ weight: g.weight, lexemes: grouped[i]! })) };
  }
}

interface Building {
  ids: string[];
  collection: number[];
  docLen: number[];
  postings: Map<string, { records: number[]; tf: number[] }>;
  appliesTo: Map<string, number[]>;
  phrases: Map<number, { lexemes: Set<string>; mass: number }[]>;
}

// Lists travel as one text per record, items and their parts split by these two control
// characters (no lexeme holds one): a few rows of text cost PGlite far less to hand over
// than thousands of rows or arrays (124 records: 12 ms instead of 28 for the terms).
const ITEM = '\u001e';
const PART = '\u001f';
const items = (text: string | null) => (text ? text.split(ITEM).map((item) => item.split(PART)) : []);

/** Files record `record` under each of its technology names (`names`: lower-cased, ITEM-separated). */
function addTechnologies(appliesTo: Map<string, number[]>, record: number, names: string | null): void {
  for (const [name] of items(names)) {
    const list = appliesTo.get(name!) ?? [];
    list.push(record);
    appliesTo.set(name!, list);
  }
}

/** One consistent copy of the side tables, or undefined when the generation moved while reading. */
export async function loadSnapshot(sql: Sql): Promise<KeywordSnapshot | undefined> {
  const generation = await corpusGeneration(sql);
  const b: Building = { ids: [], collection: [], docLen: [], postings: new Map(), appliesTo: new Map(), phrases: new Map() };
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const read = await readChunk(sql, b, after);
    if (read === undefined) break;
    after = read;
  }
  const collectionStats = new Map(
    (await sql.query<{ c: number; n: number; total: number }>('SELECT collection_id AS c, n, total_len AS total FROM collection_stats')).map((r) => [r.c, { n: r.n, totalLen: r.total }]),
  );
  const passages = await loadPassages(sql);
  if ((await corpusGeneration(sql)) !== generation) return undefined;
  // Document frequencies counted from the postings: collection_term_stats holds the same
  // counts, kept in the same transaction as record_terms (the tests compare the answers).
  const postings = new Map<string, Postings>();
  const df = new Map<string, Map<number, number>>();
  for (const [lexeme, p] of b.postings) {
    postings.set(lexeme, { records: Int32Array.from(p.records), tf: Float64Array.from(p.tf) });
    const counts = new Map<number, number>();
    for (const r of p.records) counts.set(b.collection[r]!, (counts.get(b.collection[r]!) ?? 0) + 1);
    df.set(lexeme, counts);
  }
  return new KeywordSnapshot({
    generation, ids: b.ids, collection: Int32Array.from(b.collection), docLen: Float64Array.from(b.docLen),
    postings, appliesTo: b.appliesTo, phrases: b.phrases, collectionStats, df,
  }, passages);
}

/** pgvector's binary form (vector_send), at the start of `bytes`: dimensions (int16), a reserved int16, then big-endian float4s. */
export function decodeVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dimensions = view.getInt16(0);
  const values = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) values[i] = view.getFloat32(4 + 4 * i);
  return values;
}

/** Every passage vector, in (record, passage) order, when the store holds at most RESIDENT_PASSAGES; else undefined. */
async function loadPassages(sql: Sql): Promise<PassageSnapshot | undefined> {
  const [count] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM record_passages LIMIT ${RESIDENT_PASSAGES + 1}) s`);
  if (!count || count.n > RESIDENT_PASSAGES) return undefined;
  const records: string[] = [];
  const recordOf: number[] = [];
  const collection: number[] = [];
  const vectors: Float32Array[] = [];
  const norms: number[] = [];
  let after: [string, number] = ['00000000-0000-0000-0000-000000000000', -1];
  for (;;) {
    // One row per chunk, the vectors as one base64 text: PGlite hands bytea over as hex, which
    // it decodes at about 0.2 ms a vector (1,458 passages: 280 ms against 20 as base64).
    const [chunk] = await sql.query<{ keys: string | null; vectors: string | null }>(
      `SELECT string_agg(p.record_id::text || chr(31) || p.passage || chr(31) || p.collection_id, chr(30) ORDER BY p.record_id, p.passage) AS keys,
              encode(string_agg(vector_send(p.embedding), ''::bytea ORDER BY p.record_id, p.passage), 'base64') AS vectors
         FROM (SELECT * FROM record_passages WHERE (record_id, passage) > ($1::uuid, $2::int) ORDER BY record_id, passage LIMIT ${PASSAGE_CHUNK}) p`,
      after,
    );
    const keys = items(chunk?.keys ?? null);
    const bytes = Buffer.from(chunk?.vectors ?? '', 'base64');
    let offset = 0;
    for (const [id, , c] of keys) {
      if (records.at(-1) !== id) records.push(id!);
      recordOf.push(records.length - 1);
      collection.push(Number(c));
      const vector = decodeVector(bytes.subarray(offset));
      vectors.push(vector);
      norms.push(squaredNorm(vector));
      offset += 4 + 4 * vector.length;
    }
    if (keys.length < PASSAGE_CHUNK) break;
    after = [keys.at(-1)![0]!, Number(keys.at(-1)![1])];
  }
  const dimensions = vectors[0]?.length ?? 0;
  const flat = new Float32Array(vectors.length * dimensions);
  vectors.forEach((v, i) => flat.set(v, i * dimensions));
  const { approved, appliesTo } = await passageRecordDetails(sql, records);
  return new PassageSnapshot({
    dimensions, records, approved, appliesTo, recordOf: Int32Array.from(recordOf), collection: Int32Array.from(collection), vectors: flat, norms: Float32Array.from(norms),
  });
}

/** Whether each record is approved, and the records per technology name (lower-cased). */
async function passageRecordDetails(sql: Sql, records: readonly string[]) {
  const number = new Map(records.map((id, i) => [id, i]));
  const approved = new Uint8Array(records.length);
  const appliesTo = new Map<string, number[]>();
  const rows = await sql.query<{ id: string; ok: boolean; names: string | null }>(
    `SELECT r.id::text AS id, r.status = 'approved' AS ok,
            (SELECT string_agg(lower(a.name), chr(30)) FROM record_applies_to a WHERE a.record_id = r.id) AS names
       FROM records r WHERE r.id IN (SELECT p.record_id FROM record_passages p)`,
  );
  for (const row of rows) {
    const i = number.get(row.id);
    if (i === undefined) continue;
    approved[i] = row.ok ? 1 : 0;
    addTechnologies(appliesTo, i, row.names);
  }
  return { approved, appliesTo };
}

/** The next CHUNK records after `after` (ids ascending): their terms, technologies and phrasings. Returns the last id, or undefined at the end. */
async function readChunk(sql: Sql, b: Building, after: string): Promise<string | undefined> {
  // The chunk's bounds first, from the records' primary key: grouping record_terms past `after`
  // under a LIMIT made the planner sort all the rest on each chunk (20,000 records: 7.7 s).
  const bounds = await sql.query<{ id: string }>(`SELECT id::text AS id FROM records WHERE id > $1::uuid ORDER BY id LIMIT ${CHUNK}`, [after]);
  if (bounds.length === 0) return undefined;
  const range = [bounds[0]!.id, bounds[bounds.length - 1]!.id] as const;
  // float8 casts: tf and doc_len are real, and their exact values are what the statement computes with.
  const records = await sql.query<{ id: string; c: number; len: number; terms: string }>(
    `SELECT t.record_id::text AS id, min(t.collection_id) AS c, min(t.doc_len)::float8 AS len,
            string_agg(t.lexeme || chr(31) || t.tf::float8::text, chr(30)) AS terms
       FROM record_terms t WHERE t.record_id BETWEEN $1::uuid AND $2::uuid GROUP BY t.record_id`,
    range,
  );
  // Records are numbered in the order read: each word's postings come out in ascending numbers.
  const number = new Map<string, number>();
  for (const r of records) {
    const i = b.ids.length;
    number.set(r.id, i);
    b.ids.push(r.id);
    b.collection.push(r.c);
    b.docLen.push(r.len);
    for (const [lexeme, tf] of items(r.terms)) {
      let p = b.postings.get(lexeme!);
      if (!p) b.postings.set(lexeme!, (p = { records: [], tf: [] }));
      p.records.push(i);
      p.tf.push(Number(tf));
    }
  }
  if (records.length > 0) await readRecordDetails(sql, b, number, range);
  return bounds.length < CHUNK ? undefined : range[1];
}

/** Technologies and phrasings of the records numbered in `number`, ids from `range[0]` to `range[1]`. */
async function readRecordDetails(sql: Sql, b: Building, number: ReadonlyMap<string, number>, range: readonly [string, string]): Promise<void> {
  const rows = await sql.query<{ id: string; names: string | null; phrases: string | null; masses: string | null }>(
    `SELECT r.id::text AS id,
            (SELECT string_agg(lower(a.name), chr(30)) FROM record_applies_to a WHERE a.record_id = r.id) AS names,
            (SELECT string_agg(p.phrase || chr(31) || p.lexeme, chr(30)) FROM record_phrase_terms p WHERE p.record_id = r.id) AS phrases,
            (SELECT string_agg(m.phrase || chr(31) || m.mass::text, chr(30)) FROM record_phrase_mass m WHERE m.record_id = r.id) AS masses
       FROM records r WHERE r.id BETWEEN $1::uuid AND $2::uuid`,
    range,
  );
  for (const row of rows) {
    const i = number.get(row.id);
    if (i === undefined) continue;
    addTechnologies(b.appliesTo, i, row.names);
    // Only phrasings with a mass count (the statement joins record_phrase_mass).
    const byPhrase = new Map(items(row.masses).map(([phrase, mass]) => [phrase!, { lexemes: new Set<string>(), mass: Number(mass) }]));
    for (const [phrase, lexeme] of items(row.phrases)) byPhrase.get(phrase!)?.lexemes.add(lexeme!);
    const kept = [...byPhrase.values()].filter((p) => p.lexemes.size > 0);
    if (kept.length > 0) b.phrases.set(i, kept);
  }
}
