/**
 * `npm run eval:guidance -- [options]`: the honesty evaluation (bin/eval/guidance-eval.ts)
 * and the calibration of relevance profiles (bin/eval/calibrate.ts).
 *
 * Without a target, the guidance corpus is imported and embedded into an in-memory
 * store, and every question of both sets (real developers' questions, and those
 * written with the records) is asked through `search_knowledge` in hybrid mode (the
 * bundled encoder) and keyword mode (no encoder): a table per set, mode and half.
 *
 * `--calibrate` fits the profiles on the tune halves of both sets, from replays the
 * store computes, and reports the fitted profiles on every half. Where they go:
 * - no target: printed; `--write-defaults` writes them to
 *   guidance/policy/relevance-profiles.json (the defaults every store starts with);
 * - `--data-dir DIR`: a local store (through its running server, if one holds it);
 * - `--remote FUNCTION`: a deployed stack, through its admin Lambda; the profile of
 *   the stack's encoder (Titan v2) is fitted on the stack's own records and embeddings
 *   and stored in its database, where the search functions read it.
 */
import { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { createEmbedder } from '../../lambdas/embeddings/embedder-factory.ts';
import { searchKnowledge } from '../../lambdas/retrieval/search-service.ts';
import { replayQuestions, type ReplaySet } from '../../lambdas/retrieval/relevance-replay.ts';
import type { RelevanceProfile } from '../../lambdas/retrieval/relevance.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import { searchKnowledgeInput } from '../../schema/tools.ts';
import type { AdminCommand } from '../../lambdas/admin/admin-operations.ts';
import { CachedEmbedder } from './cached-embedder.ts';
import { answerAll, byHalf, formatHonesty, loadQuestionSet, replayAnswers, toolArguments, type HonestyMetrics, type QuestionSet } from './guidance-eval.ts';
import { calibrate } from './calibrate.ts';

const opts = new Command('eval:guidance')
  .option('--records <dir>', 'the guidance corpus (in-memory store)', 'guidance')
  .option('--real <dir>', "real developers' questions, split by record", 'test/fixtures/real-questions')
  .option('--written <dir>', 'questions written with the records, split by id', 'test/fixtures/guidance-eval')
  .option('--json <file>', 'also write the report as JSON')
  .option('--cache-dir <dir>', 'document embedding cache', '.chatctx/eval-cache')
  .option('--calibrate', 'fit the relevance profiles on the tune halves and report them on both halves')
  .option('--write-defaults', 'with --calibrate and no target: write guidance/policy/relevance-profiles.json')
  .option('--data-dir <dir>', 'with --calibrate: calibrate this local store and store the profile in it')
  .option('--remote <function>', "with --calibrate: calibrate a deployed stack through its admin function and store the profile there")
  .parse()
  .opts<{ records: string; real: string; written: string; json?: string; cacheDir: string; calibrate?: boolean; writeDefaults?: boolean; dataDir?: string; remote?: string }>();

type Admin = (command: AdminCommand) => Promise<unknown>;
type Rows = Record<string, Record<string, HonestyMetrics>>;

const started = performance.now();
const sets = [await loadQuestionSet('real', resolve(opts.real), 'record'), await loadQuestionSet('written', resolve(opts.written), 'id')];
const rows: Rows = {};
const report: Record<string, unknown> = { sets: sets.map((s) => ({ name: s.name, questions: s.questions.length, tune: s.tune.size })) };

if (opts.dataDir || opts.remote) {
  if (!opts.calibrate) throw new Error('--data-dir and --remote are targets for --calibrate.');
  await calibrateTarget(await targetAdmin());
} else {
  await evaluateInMemory();
}
console.log(formatHonesty(rows));
console.log(`total ${Math.round((performance.now() - started) / 100) / 10} s`);
if (opts.json) {
  await writeFile(opts.json, JSON.stringify({ ...report, rows }, null, 2) + '\n');
  console.log(`wrote ${opts.json}`);
}

async function targetAdmin(): Promise<Admin> {
  if (opts.remote) {
    const { runRemoteAdmin } = await import('../../lambdas/aws/remote-admin.ts');
    return (command) => runRemoteAdmin(opts.remote!, command);
  }
  const [{ runLocalAdmin }, { readLocalConfig }] = await Promise.all([import('../../lambdas/local/admin-client.ts'), import('../../lambdas/local/local-config.ts')]);
  const config = readLocalConfig();
  const embedder = () => createEmbedder({ provider: config.embeddings, bedrockModelId: config.bedrockModelId });
  return (command) => runLocalAdmin(resolve(opts.dataDir!), command, { embedder });
}

/** Replays of every question of every set, computed where the store is, in batches. */
async function remoteReplays(admin: Admin, mode: 'hybrid' | 'keyword'): Promise<ReplaySet[]> {
  const out: ReplaySet[] = [];
  for (const set of sets) {
    const questions = set.questions.map((q) => toolArguments(q));
    const parts: ReplaySet[] = [];
    for (let start = 0; start < questions.length; start += 100) {
      parts.push((await admin({ op: 'relevance.replay', mode, questions: questions.slice(start, start + 100) })) as ReplaySet);
    }
    out.push({ ...parts[0]!, replays: parts.flatMap((p) => p.replays) });
  }
  return out;
}

/** Fits a profile on the tune halves of every set and reports it on every half. */
function fitAndReport(label: string, replaySets: readonly ReplaySet[]): RelevanceProfile {
  const tuneQuestions = sets.flatMap((set) => set.questions.filter((q) => set.tune.has(q.id)));
  const tuneReplays = sets.flatMap((set, i) => set.questions.flatMap((q, j) => (set.tune.has(q.id) ? [replaySets[i]!.replays[j]!] : [])));
  const { profile } = calibrate(
    { profile: replaySets[0]!.profile, embedder: replaySets[0]!.embedder, questions: tuneQuestions, replays: tuneReplays },
    { sets: sets.map((s) => `${s.name} (tune half)`) },
  );
  sets.forEach((set, i) => (rows[`${set.name}, ${label} (fitted ${profile.profile})`] = byHalf(set, replayAnswers(set.questions, replaySets[i]!.replays, profile))));
  const { fitted: _fitted, ...shown } = profile;
  console.error(`fitted ${profile.profile}: ${JSON.stringify(shown)}`);
  return profile;
}

async function calibrateTarget(admin: Admin): Promise<void> {
  const hybrid = await remoteReplays(admin, 'hybrid');
  const keyword = await remoteReplays(admin, 'keyword');
  const fitted = [fitAndReport('keyword', keyword)];
  if (hybrid[0]!.profile !== 'none') fitted.push(fitAndReport('hybrid', hybrid));
  for (const profile of fitted) await admin({ op: 'relevance.save', profile });
  report.profiles = fitted;
  console.error(`stored ${fitted.map((p) => p.profile).join(' and ')} in ${opts.remote ? `the stack behind ${opts.remote}` : resolve(opts.dataDir!)}`);
}

async function evaluateInMemory(): Promise<void> {
  const records = await readRecordFiles(resolve(opts.records));
  const sql = await PgliteSql.open();
  await migrate(sql);
  await importRecords(sql, records, { approve: true });
  const inner = await createEmbedder({ provider: 'use-lite', bedrockModelId: '' });
  const embedder = inner ? await CachedEmbedder.open(inner, resolve(opts.cacheDir)) : undefined;
  if (embedder) await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model));
  await sql.query('ANALYZE');
  const pepper = randomBytes(32);
  const deps = { sql, secrets: { pepper: async () => pepper }, logger: createLogger(() => {}) };
  report.records = records.length;
  for (const [mode, withEncoder] of [['hybrid', true], ['keyword', false]] as const) {
    const search = (args: unknown) => searchKnowledge({ ...deps, embedder: withEncoder ? embedder : undefined }, searchKnowledgeInput.parse(args));
    for (const set of sets) rows[`${set.name}, ${mode}`] = byHalf(set, await answerAll(set.questions, search));
  }
  if (opts.calibrate) {
    const replaysOf = async (mode: 'hybrid' | 'keyword') =>
      Promise.all(sets.map((set) => replayQuestions({ ...deps, embedder }, set.questions.map((q) => toolArguments(q)), mode)));
    const none = fitAndReport('keyword', await replaysOf('keyword'));
    const useLite = fitAndReport('hybrid', await replaysOf('hybrid'));
    report.profiles = [useLite, none];
    if (opts.writeDefaults) await writeDefaults(useLite, none);
  }
  await inner?.close?.();
  await sql.close();
}

/** The shipped defaults: use-lite and none as fitted; titan-v2 as none's weights, marked uncalibrated. */
async function writeDefaults(useLite: RelevanceProfile, none: RelevanceProfile): Promise<void> {
  const file = resolve('guidance/policy/relevance-profiles.json');
  const titan: RelevanceProfile = { ...none, profile: 'titan-v2', embedder: null, calibrated: false, fitted: { ...none.fitted, note: "none's weights: calibrate on the stack" } };
  const body = {
    description:
      'The relevance policy per embedder profile: logistic weights over retrieval evidence, the admission threshold and the tail cut ' +
      '(lambdas/retrieval/relevance.ts). Written by `npm run eval:guidance -- --calibrate --write-defaults`; a store\'s own calibration ' +
      '(relevance_profiles table) takes precedence. titan-v2 carries the keyword profile until a stack is calibrated.',
    profiles: { 'use-lite': useLite, 'titan-v2': titan, none },
  };
  await writeFile(file, JSON.stringify(body, null, 2) + '\n');
  console.error(`wrote ${file}`);
}
