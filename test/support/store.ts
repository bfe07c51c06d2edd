/**
 * An in-memory embedded store with the real schema, for tests that exercise the
 * core in-process (no HTTP). Same PGlite + pgvector as the local server.
 */
import { randomBytes } from 'node:crypto';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import type { Logger } from '../../lambdas/ports/logger.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import { SeededEmbedder, loadSeed } from '../../lambdas/embeddings/embedding-seed.ts';

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

export async function memoryStore(options: { starterCorpus?: boolean; embedder?: Embedder } = {}): Promise<MemoryStore> {
  const sql = await PgliteSql.open();
  await migrate(sql);
  if (options.starterCorpus ?? true) await importRecords(sql, await readRecordFiles(STARTER_CORPUS_DIR), { approve: true });
  const embedder = options.embedder;
  if (embedder) await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model), { deferIndex: true });
  const pepper = randomBytes(32);
  const logs: string[] = [];
  const logger = createLogger((line) => logs.push(line));
  return { sql, pepper, logs, logger, tools: createToolHandlers({ sql, secrets: { pepper: async () => pepper }, embedder, logger }) };
}
