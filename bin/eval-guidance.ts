/**
 * `npm run eval:guidance -- [--records DIR] [--questions DIR] [--json FILE] [--cache-dir DIR]`
 *
 * The honesty evaluation (see bin/evaluation/guidance-eval.ts): the guidance corpus
 * imported and embedded into an in-memory store, every judged and uncovered question
 * asked through `search_knowledge` in hybrid mode (the bundled encoder) and keyword
 * mode (no encoder), and a table per mode and half of the split.
 */
import { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PgliteSql } from '../lambdas/storage/pglite-sql.ts';
import { migrate } from '../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../lambdas/records/record-files.ts';
import { importRecords } from '../lambdas/records/record-import.ts';
import { embedRecords, recordsToEmbed } from '../lambdas/embeddings/record-embeddings.ts';
import { createEmbedder } from '../lambdas/embeddings/embedder-factory.ts';
import { searchKnowledge } from '../lambdas/retrieval/search-service.ts';
import { createLogger } from '../lambdas/observability/logger.ts';
import { searchKnowledgeInput } from '../schema/tools.ts';
import { CachedEmbedder } from './evaluation/cached-embedder.ts';
import { answerAll, byHalf, formatHonesty, loadQuestions, type HonestyMetrics } from './evaluation/guidance-eval.ts';

const opts = new Command('eval:guidance')
  .option('--records <dir>', 'the guidance corpus', 'guidance')
  .option('--questions <dir>', 'judged and uncovered questions (.jsonl)', 'test/fixtures/guidance-eval')
  .option('--json <file>', 'also write the report as JSON')
  .option('--cache-dir <dir>', 'document embedding cache', '.chatctx/eval-cache')
  .parse()
  .opts<{ records: string; questions: string; json?: string; cacheDir: string }>();

const started = performance.now();
const records = await readRecordFiles(resolve(opts.records));
const questions = await loadQuestions(resolve(opts.questions));
const sql = await PgliteSql.open();
await migrate(sql);
await importRecords(sql, records, { approve: true });
const inner = await createEmbedder({ provider: 'use-lite', bedrockModelId: '' });
const embedder = inner ? await CachedEmbedder.open(inner, resolve(opts.cacheDir)) : undefined;
if (embedder) await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model));
await sql.query('ANALYZE');
const pepper = randomBytes(32);
const deps = { sql, secrets: { pepper: async () => pepper }, logger: createLogger(() => {}) };

const rows: Record<string, Record<string, HonestyMetrics>> = {};
for (const [mode, withEncoder] of [
  ['hybrid', true],
  ['keyword', false],
] as const) {
  const search = (args: unknown) => searchKnowledge({ ...deps, embedder: withEncoder ? embedder : undefined }, searchKnowledgeInput.parse(args));
  rows[mode] = byHalf(await answerAll(questions, search));
}
await inner?.close?.();
await sql.close();

console.log(`${records.length} records, ${questions.length} questions`);
console.log(formatHonesty(rows));
console.log(`total ${Math.round((performance.now() - started) / 100) / 10} s`);
if (opts.json) {
  await writeFile(opts.json, JSON.stringify({ records: records.length, questions: questions.length, modes: rows }, null, 2) + '\n');
  console.log(`wrote ${opts.json}`);
}
