/**
 * An in-memory embedded store with the real schema, for tests that exercise the
 * core in-process (no HTTP). Same PGlite + pgvector as the local server.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import type { Logger } from '../../lambdas/ports/logger.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import { SeededEmbedder, loadSeed } from '../../lambdas/embeddings/embedding-seed.ts';
import { buildStore, storeDumpPath } from './prepared.ts';

/**
 * The bundled encoder behind the starter corpus's shipped embeddings, as the local
 * server runs it: the corpus is embedded at once, every other text by the encoder.
 */
export async function seededUseLite(): Promise<SeededEmbedder> {
  const encoder = new UseLiteEmbedder();
  return new SeededEmbedder(encoder, await loadSeed(encoder.model, encoder.dimensions));
}

export interface MemoryStore {
  sql: PgliteSql;
  pepper: Buffer;
  logs: string[];
  logger: Logger;
  tools: ReturnType<typeof createToolHandlers>;
}

/** The run's prepared dump of a migrated store (see `prepared.ts`); undefined when the run prepared none. */
export async function preparedDump(starterCorpus: boolean): Promise<Blob | undefined> {
  const prepared = inject('chatctxPrepared');
  return prepared ? new Blob([await readFile(storeDumpPath(prepared, starterCorpus))]) : undefined;
}

/**
 * A migrated store, with the starter corpus unless told not to: restored from the
 * run's prepared dump (about a second) rather than initialised, migrated and
 * imported (several); built here when the run prepared none.
 */
export async function migratedStore(starterCorpus = true): Promise<PgliteSql> {
  const dump = await preparedDump(starterCorpus);
  return dump ? PgliteSql.fromDump(dump) : buildStore(starterCorpus);
}

export async function memoryStore(options: { starterCorpus?: boolean; embedder?: Embedder } = {}): Promise<MemoryStore> {
  const sql = await migratedStore(options.starterCorpus ?? true);
  const embedder = options.embedder;
  if (embedder) await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model), { deferIndex: true });
  const pepper = randomBytes(32);
  const logs: string[] = [];
  const logger = createLogger((line) => logs.push(line));
  return { sql, pepper, logs, logger, tools: createToolHandlers({ sql, secrets: { pepper: async () => pepper }, embedder, logger }) };
}
