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
import {
  answerAll,
  byHalf,
  formatHonesty,
  loadQuestions,
  replay,
  sweep,
  toolArguments,
  type GuidanceQuestion,
  type HonestyMetrics,
  type Replay,
} from './evaluation/guidance-eval.ts';
import { CANDIDATE_POOL } from '../lambdas/retrieval/search-service.ts';
import { rankCandidates } from '../lambdas/retrieval/rank.ts';
import { embedQuery } from '../lambdas/retrieval/query-embedding.ts';
import { loadApprovedByIds } from '../lambdas/records/record-read.ts';
import type { Embedder } from '../lambdas/ports/embedder.ts';

const opts = new Command('eval:guidance')
  .option('--records <dir>', 'the guidance corpus', 'guidance')
  .option('--questions <dir>', 'judged and uncovered questions (.jsonl)', 'test/fixtures/guidance-eval')
  .option('--json <file>', 'also write the report as JSON')
  .option('--cache-dir <dir>', 'document embedding cache', '.chatctx/eval-cache')
  .option('--sweep', 'choose the relevance policy on the tune half, and report it on both halves')
  .parse()
  .opts<{ records: string; questions: string; json?: string; cacheDir: string; sweep?: boolean }>();

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
let chosen: ReturnType<typeof sweep> | undefined;
let chosenAbsent: number | undefined;
if (opts.sweep) {
  // The weight of query words no record contains changes the rankings themselves: one replay set per value.
  for (const absentWeight of [0.5, 1, 1.5, 2]) {
    const modes = [await replays(questions, embedder, absentWeight), await replays(questions, undefined, absentWeight)];
    const best = sweep(modes);
    console.error(`absent weight ${absentWeight}: objective ${best.score.toFixed(3)} ${JSON.stringify(best.policy)}`);
    if (!chosen || best.score > chosen.score) {
      chosen = best;
      chosenAbsent = absentWeight;
      rows['hybrid (chosen policy)'] = byHalf(replay(modes[0]!, best.policy));
      rows['keyword (chosen policy)'] = byHalf(replay(modes[1]!, best.policy));
    }
  }
}
await inner?.close?.();
await sql.close();

/** Each question's ranking before the relevance policy, and its candidates' records. */
async function replays(list: readonly GuidanceQuestion[], withEncoder: Embedder | undefined, absentWeight: number): Promise<Replay[]> {
  const out: Replay[] = [];
  for (const question of list) {
    const input = searchKnowledgeInput.parse(toolArguments(question));
    const vector = withEncoder ? (await embedQuery({ ...deps, embedder: withEncoder }, input.query)).vector : undefined;
    const ranking = await rankCandidates(sql, input.query, vector, { mode: 'hybrid', filter: {}, pool: CANDIDATE_POOL, absentWeight });
    const records = new Map((await loadApprovedByIds(sql, ranking.candidates.map((c) => c.id))).map((r) => [r.id, r]));
    out.push({ question, input, candidates: ranking.candidates, records });
  }
  return out;
}

console.log(`${records.length} records, ${questions.length} questions`);
console.log(formatHonesty(rows));
if (chosen) console.log(`chosen on the tune half (objective ${chosen.score.toFixed(3)}): absent-word weight ${chosenAbsent}, ${JSON.stringify(chosen.policy)}`);
console.log(`total ${Math.round((performance.now() - started) / 100) / 10} s`);
if (opts.json) {
  await writeFile(opts.json, JSON.stringify({ records: records.length, questions: questions.length, modes: rows, chosen }, null, 2) + '\n');
  console.log(`wrote ${opts.json}`);
}
