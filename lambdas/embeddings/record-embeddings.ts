/**
 * Embeds approved records into `record_passages`, and finds the ones whose
 * embedding is missing or stale (made by another model, or from older text).
 * Import calls it after its transaction commits; `chatctx embeddings backfill`
 * calls it for the whole store. A failure leaves the affected records stale and
 * searchable by keyword; it never undoes an import.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import { recordPassages } from './passages.ts';
import { vectorLiteral } from './vector-codec.ts';
import { uuidSet } from '../records/record-identifiers.ts';

export interface EmbeddableRecord {
  readonly id: string;
  readonly title: string;
  readonly summary: string | null;
  readonly recommendation: string;
  /** Each phrasing is embedded as a passage of its own (a short text, like the question it matches). */
  readonly askedAs: readonly string[];
  readonly contentHash: string;
}

export interface EmbedProgress {
  readonly done: number;
  readonly total: number;
}

export interface EmbedRecordsOptions {
  /** Re-embed records that are already current. */
  readonly force?: boolean;
  /** Only these record ids (e.g. the ones an import just changed). */
  readonly ids?: readonly string[];
  /** Records embedded per transaction. @default 16 */
  readonly batchSize?: number;
  readonly onProgress?: (progress: EmbedProgress) => void;
  readonly signal?: AbortSignal;
  /**
   * When the records to embed outnumber the passages already stored (a first start,
   * a model change), drop the vector index first and build it once at the end:
   * inserting into an HNSW index one row at a time costs about three times the bulk
   * build. Searches in between scan exactly, so answers stay right; a process killed
   * in between leaves no index, and the next pass with this option builds it. Only
   * for a store whose owner runs the embedding (the local one): it needs DDL rights.
   */
  readonly deferIndex?: boolean;
}

/** The vector indexes over the passages (schema/001_initial.sql and, the public collection's own, 013 define the same). */
const VECTOR_INDEXES = [
  'CREATE INDEX IF NOT EXISTS record_passages_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops)',
  'CREATE INDEX IF NOT EXISTS record_passages_public_embedding_idx ON record_passages USING hnsw (embedding vector_cosine_ops) WHERE collection_id = 1',
];

export interface EmbedSummary {
  readonly embedded: number;
  readonly passages: number;
}

/**
 * What the sentence encoder reads of a record: title, summary and recommendation in
 * windows, then each `asked_as` phrasing alone. A record's similarity is its best
 * passage's, so a question phrased like one of them is matched by that one.
 */
export function passagesOf(record: Pick<EmbeddableRecord, 'title' | 'summary' | 'recommendation' | 'askedAs'>): string[] {
  const asked = record.askedAs.map((phrase) => phrase.trim()).filter((phrase) => phrase !== '');
  return [...recordPassages({ title: record.title, body: [record.summary ?? '', record.recommendation] }), ...asked];
}

/** Approved records whose passages are missing or stale for `model` (all of them with `force`). */
export async function recordsToEmbed(sql: Sql, model: string, options: Pick<EmbedRecordsOptions, 'force' | 'ids'> = {}): Promise<EmbeddableRecord[]> {
  const rows = await sql.query<{ id: string; title: string; summary: string | null; recommendation: string; asked_as: string[]; content_hash: string }>(
    `SELECT r.id::text AS id, r.title, r.summary, r.recommendation, r.asked_as, r.content_hash
       FROM records r
      WHERE r.status = 'approved'
        AND ($2::boolean OR r.embedding_model IS DISTINCT FROM $1 OR r.embedded_hash IS DISTINCT FROM r.content_hash)
        ${options.ids ? `AND r.id = ANY (${uuidSet(3)})` : ''}
      ORDER BY r.id`,
    // Given ids, only those rows are read (through the primary key), not every approved record.
    [model, options.force ?? false, ...(options.ids ? [JSON.stringify(options.ids)] : [])],
    { json: ['asked_as'] },
  );
  return rows.map((r) => ({ id: r.id, title: r.title, summary: r.summary, recommendation: r.recommendation, askedAs: r.asked_as, contentHash: r.content_hash }));
}

export async function embedRecords(sql: Sql, embedder: Embedder, records: readonly EmbeddableRecord[], options: EmbedRecordsOptions = {}): Promise<EmbedSummary> {
  const batchSize = options.batchSize ?? 16;
  let embedded = 0;
  let passages = 0;
  const deferred = options.deferIndex === true && records.length > 0 && (await storedPassages(sql)) < records.length;
  if (deferred) await sql.query('DROP INDEX IF EXISTS record_passages_embedding_idx, record_passages_public_embedding_idx');
  options.onProgress?.({ done: 0, total: records.length });
  for (let start = 0; start < records.length; start += batchSize) {
    options.signal?.throwIfAborted();
    const batch = records.slice(start, start + batchSize);
    const texts = batch.map(passagesOf);
    const vectors = await embedder.embed(texts.flat(), options.signal);
    let offset = 0;
    await sql.transaction(async (tx) => {
      for (const [i, record] of batch.entries()) {
        const own = vectors.slice(offset, offset + texts[i]!.length).map(vectorLiteral);
        offset += texts[i]!.length;
        await tx.query('DELETE FROM record_passages WHERE record_id = $1::uuid', [record.id]);
        await tx.query(
          // The passages carry their record's collection, which search filters them by (a move rewrites it).
          `INSERT INTO record_passages (record_id, passage, embedding, collection_id)
           SELECT $1::uuid, (e.ordinality - 1)::int, e.value::vector, (SELECT r.collection_id FROM records r WHERE r.id = $1::uuid)
             FROM jsonb_array_elements_text($2::jsonb) WITH ORDINALITY e`,
          [record.id, JSON.stringify(own)],
        );
        // Only mark current if the text did not change while we were embedding it.
        await tx.query('UPDATE records SET embedding_model = $2, embedded_hash = $3 WHERE id = $1::uuid AND content_hash = $3', [
          record.id,
          embedder.model,
          record.contentHash,
        ]);
        passages += own.length;
      }
    });
    embedded += batch.length;
    options.onProgress?.({ done: embedded, total: records.length });
  }
  // Also after an interrupted pass (which left none): the statement is a no-op when the index exists.
  if (options.deferIndex) for (const index of VECTOR_INDEXES) await sql.query(index);
  return { embedded, passages };
}

async function storedPassages(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM record_passages');
  return row?.n ?? 0;
}
