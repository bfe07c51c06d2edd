/**
 * `npm run eval -- --dataset DIR [--records DIR] [--queries N] [--json FILE]
 *                  [--embeddings use-lite|none] [--sweep 0,0.1,0.2] [--cache-dir DIR]
 *                  [--keyword-index store|memory]`
 *
 * Evaluates retrieval on a BEIR-format folder and prints the quality table.
 * Document embeddings are cached on disk (default .chatctx/eval-cache) so a rerun
 * only re-embeds what changed. Query embeddings are not: every query goes to the
 * encoder, so a query-embedding cache miss is timed as an agent meets it. See
 * bin/eval/run-eval.ts.
 */
import { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MultiBar, Presets } from 'cli-progress';
import { runEvaluation, formatReport } from './run-eval.ts';
import { CachedEmbedder } from './cached-embedder.ts';
import { availableParallelism } from 'node:os';
import { createEmbedder } from '../../lambdas/embeddings/embedder-factory.ts';
import { SETTINGS, readSetting } from '../../lambdas/config/settings.ts';

const opts = new Command('eval')
  .requiredOption('--dataset <dir>', 'BEIR folder: corpus.jsonl, queries.jsonl, qrels.tsv (or qrels/test.tsv)')
  .option('--records <dir>', 'use guidance records from this folder as the corpus (qrels name slugs)')
  .option('--queries <n>', 'evaluate the first N queries only', (v) => Number.parseInt(v, 10))
  .option('--json <file>', 'also write the report as JSON')
  .option('--embeddings <provider>', 'use-lite, bedrock or none (default: CHATCTX_EMBEDDINGS or use-lite)')
  .option('--sweep <weights>', 'dense weights to compare on the tune half, e.g. 0,0.1,0.2,0.3', (v) => v.split(',').map(Number))
  .option('--cache-dir <dir>', 'document embedding cache', '.chatctx/eval-cache')
  .option('--keyword-index <where>', 'store: the keyword side by the store\'s statement (the AWS stack\'s way); memory: from the copy in memory, as the local server does', 'store')
  .parse()
  .opts<{ dataset: string; records?: string; queries?: number; json?: string; embeddings?: string; sweep?: number[]; cacheDir: string; keywordIndex: string }>();
if (opts.keywordIndex !== 'store' && opts.keywordIndex !== 'memory') {
  console.error(`eval: --keyword-index takes store or memory, not ${JSON.stringify(opts.keywordIndex)}`);
  process.exit(2);
}

const env = opts.embeddings === undefined ? process.env : { ...process.env, [SETTINGS.embeddings.env]: opts.embeddings };
const provider = readSetting(env, 'embeddings');
// Nothing else runs beside a bulk evaluation: embed the corpus on one worker thread per core.
const inner = await createEmbedder({ provider, bedrockModelId: readSetting(env, 'bedrockModelId'), threads: availableParallelism() });
const embedder = inner ? await CachedEmbedder.open(inner, resolve(opts.cacheDir)) : undefined;
// On a terminal: live bars. Elsewhere (CI logs, pipes): a progress line every 15 s.
const bars = new MultiBar(
  { format: '{step} {bar} {value}/{total}  {eta_formatted} left', stream: process.stderr, hideCursor: true, noTTYOutput: true, notTTYSchedule: 15_000 },
  Presets.shades_classic,
);
const log = (line: string) => (process.stderr.isTTY ? bars.log(line + '\n') : console.error(line));
const started = performance.now();

const report = await runEvaluation({
  datasetDir: resolve(opts.dataset),
  recordsDir: opts.records ? resolve(opts.records) : undefined,
  queries: opts.queries,
  embedder,
  // Queries go to the encoder itself: a query the store has not cached is a real encoder call.
  queryEmbedder: inner,
  sweep: opts.sweep,
  keywordIndex: opts.keywordIndex as 'memory' | 'store',
  log,
  progress: (step) => {
    let bar: ReturnType<MultiBar['create']> | undefined;
    return ({ done, total }) => {
      bar ??= bars.create(total, 0, { step: step.padEnd(8) });
      bar.update(done);
    };
  },
});
bars.stop();
await inner?.close?.();
const total = Math.round((performance.now() - started) / 100) / 10;
console.log(formatReport(report));
if (embedder) console.log(`document embedding cache: ${embedder.hits} hits, ${embedder.misses} new embeddings (${embedder.size} cached)`);
console.log(`total ${total} s`);
if (opts.json) {
  await writeFile(opts.json, JSON.stringify({ ...report, total_s: total }, null, 2) + '\n');
  console.log(`wrote ${opts.json}`);
}
