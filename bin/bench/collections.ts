/**
 * `npm run bench:collections -- [--internal 2000] [--questions 200] [--rounds 5] [--runs 3] [--out FILE] [--cache-dir DIR] [--quick] [--docs]`
 *
 * Does an internal collection slow the public's searches down? Two in-memory stores in
 * one process, built as a local server builds its own (the starter corpus with its
 * shipped vectors, the bundled encoder for everything else, the vector index built
 * once after a large embedding pass, statistics refreshed as at a server's start):
 *
 * - A: the starter corpus (public) and `--internal` generated records that pass every
 *   approval gate (`reviewed-records.mjs`), imported into a collection `internal` and
 *   embedded, so both retrieval sides hold their passages;
 * - B: the starter corpus alone.
 *
 * Both answer the same questions (a fixed sample of both evaluation sets) as a guest,
 * A and B in turn, alternating which goes first, for `--rounds` rounds; a caller scoped
 * to public and internal asks them on A too, for context. No answer cache: every
 * search ranks, judges and shapes. Each question is asked once on each store before
 * the rounds (its embedding then sits in the store's cache, as a known question's
 * does), so the rounds time the search itself, not the encoder, which costs the
 * same whatever the store holds.
 *
 * Beside the times it checks what the guest gets: A's answers against B's (records,
 * total_candidates, mode, suggestions), the nearest-neighbour side on its own for
 * every question (how many records it returns on A and on B, and how many of the exact
 * nearest ones each found), and the plans of both retrieval statements, taken from the
 * functions' own text and run with EXPLAIN ANALYZE for the first questions.
 *
 * All of it is run `--runs` times (3), both stores built anew each run. Prints p50/p95
 * per store, the ratio A/B (median of the rounds' ratios; the medians over runs), the
 * load average before and after; writes the same as JSON (by default to the git-ignored
 * `bench-results/collections.json`), and with `--docs` to docs/bench/collections.json
 * and docs/testing.md's table rendered from it. The internal records' passage vectors are
 * kept in `--cache-dir` (the evaluation's embedding cache), so only the first run
 * waits for the encoder; the report says how long embedding took and how much came
 * from the cache.
 *
 * `--quick` (the benchmark test) uses the first 8 starter records, 10 internal ones,
 * 4 questions, 2 rounds and one run: it checks that the benchmark runs and writes its report,
 * not what it measures.
 */
import { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles, validateRecords } from '../../lambdas/records/record-files.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { embedRecords, recordsToEmbed } from '../../lambdas/embeddings/record-embeddings.ts';
import { createEmbedder } from '../../lambdas/embeddings/embedder-factory.ts';
import { vectorLiteral } from '../../lambdas/embeddings/vector-codec.ts';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { searchKnowledge } from '../../lambdas/retrieval/search-service.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';
import { GUEST_SCOPE, type CallerScope } from '../../lambdas/auth/caller-scope.ts';
import { searchKnowledgeInput, type SearchKnowledgeOutput } from '../../schema/tools.ts';
import { CachedEmbedder } from '../eval/cached-embedder.ts';
import { loadQuestions } from '../eval/guidance-eval.ts';
import { percentile } from '../eval/metrics.ts';
import { reviewedRecords } from './reviewed-records.mjs';
import { machine, recordInDocs, renderCollections } from './docs-report.mjs';

const opts = new Command('bench:collections')
  .option('--internal <n>', 'generated records in the internal collection of store A', (v) => Number(v), 2000)
  .option('--questions <n>', 'questions per round, a fixed sample of both evaluation sets', (v) => Number(v), 200)
  .option('--rounds <n>', 'rounds of every question on every store (A and B in turn)', (v) => Number(v), 5)
  .option('--explain <n>', 'questions whose statements are run with EXPLAIN ANALYZE (in the first run)', (v) => Number(v), 5)
  .option('--runs <n>', 'runs, both stores built anew for each (medians reported)', (v) => Number(v), 3)
  .option('--out <file>', 'where the JSON report goes', 'bench-results/collections.json')
  .option('--cache-dir <dir>', "the internal records' passage embeddings, kept between runs", '.chatctx/eval-cache')
  .option('--quick', '8 starter and 10 internal records, 4 questions, 2 rounds, one run: checks that the benchmark runs')
  .option('--docs', "also write docs/bench/collections.json and docs/testing.md's table from it")
  .parse()
  .opts<{ internal: number; questions: number; rounds: number; explain: number; runs: number; out: string; cacheDir: string; quick?: boolean; docs?: boolean }>();
if (opts.quick && opts.docs) {
  console.error('bench:collections: --docs records a full run; it cannot be combined with --quick');
  process.exit(2);
}
if (opts.quick) Object.assign(opts, { internal: 10, questions: 4, rounds: 2, explain: 1, runs: 1 });
/** Starter records per store when quick: importing and indexing all of them twice takes most of a minute on a busy machine. */
const QUICK_STARTER = 8;
if (![opts.internal, opts.questions, opts.rounds, opts.runs].every((n) => Number.isInteger(n) && n >= 1) || !(Number.isInteger(opts.explain) && opts.explain >= 0)) {
  console.error(
    `bench:collections: --internal, --questions, --rounds and --runs take positive whole numbers, --explain zero or more (got ${opts.internal}, ${opts.questions}, ${opts.rounds}, ${opts.runs}, ${opts.explain})`,
  );
  process.exit(2);
}

const progress = (what: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${what}\n`);
const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const median = (values: readonly number[]) => percentile([...values].sort((a, b) => a - b), 50);
const p95 = (values: readonly number[]) => percentile([...values].sort((a, b) => a - b), 95);

/** The vector indexes (schema/001_initial.sql, and the public collection's own from 013), the collection index beside them, and the keyword side's posting index. */
const INDEXES = ['record_passages_embedding_idx', 'record_passages_public_embedding_idx', 'record_passages_collection_idx', 'record_terms_lexeme_collection_idx', 'record_terms_pkey'] as const;

interface Store {
  readonly name: 'A' | 'B';
  readonly sql: PgliteSql;
  readonly internalId?: number;
  readonly search: (query: string, scope: CallerScope) => Promise<SearchKnowledgeOutput>;
}

interface Embedding {
  readonly records: number;
  readonly passages: number;
  /** Passages the encoder embedded in this run (the rest came from the cache). */
  readonly encoded: number;
  readonly seconds: number;
}

/** Approved records of the starter corpus, embedded from the shipped seed (the encoder for any text it lacks). */
async function starterStore(embedder: Embedder): Promise<PgliteSql> {
  const sql = await PgliteSql.open();
  await migrate(sql);
  await importRecords(sql, (await readRecordFiles(STARTER_CORPUS_DIR)).slice(0, opts.quick ? QUICK_STARTER : undefined), { approve: true });
  await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model), { deferIndex: true });
  return sql;
}

/** Imports `count` gated records into a new collection `internal` and embeds them as the local server does; how long that took. */
async function addInternal(sql: PgliteSql, count: number, embedder: CachedEmbedder): Promise<{ id: number; imported: number; importSeconds: number; embedding: Embedding }> {
  const { id } = await createCollection(sql, 'internal', 'Generated guidance only keys scoped to it see.');
  const records = await validateRecords(reviewedRecords(count, 'internal'), (i) => `generated ${i}`);
  let started = performance.now();
  const summary = await importRecords(sql, records, { approve: true, collection: 'internal' });
  const importSeconds = (performance.now() - started) / 1000;
  const imported = summary.created;
  if (imported !== count) throw new Error(`${imported} of ${count} internal records were created; the generated records no longer pass the gates, or the store was not empty`);
  const misses = embedder.misses;
  started = performance.now();
  const { embedded, passages } = await embedRecords(sql, embedder, await recordsToEmbed(sql, embedder.model), { deferIndex: true });
  const embedding = { records: embedded, passages, encoded: embedder.misses - misses, seconds: round((performance.now() - started) / 1000, 2) };
  return { id, imported, importSeconds: round(importSeconds, 2), embedding };
}

/** A store's search as the tool runs it, without an answer cache. */
function searcher(sql: PgliteSql, embedder: Embedder): Store['search'] {
  const pepper = randomBytes(32);
  const deps = { sql, secrets: { pepper: async () => pepper }, embedder, logger: createLogger(() => {}) };
  return (query, scope) => searchKnowledge(deps, searchKnowledgeInput.parse({ query }), scope);
}

/** A fixed sample: every k-th question of both sets, in file order (nothing chosen by how it answers). */
async function sample(n: number): Promise<string[]> {
  const all = [...(await loadQuestions(resolve('test/fixtures/real-questions'))), ...(await loadQuestions(resolve('test/fixtures/guidance-eval')))];
  const step = Math.max(1, Math.floor(all.length / n));
  return all.filter((_, i) => i % step === 0).slice(0, n).map((q) => q.query);
}

/** What the dense side reads beside keyword search (candidate-search.ts: 40 nearest passages, pooled into at most 50 records). */
const PASSAGES = 40;
const POOL = 50;

/** A retrieval function's stored text (the collections overload), so the plans shown are the plans of what ships. */
async function functionSource(sql: PgliteSql, name: string): Promise<string> {
  const rows = await sql.query<{ src: string }>(
    `SELECT prosrc AS src FROM pg_proc WHERE proname = $1 AND pg_get_function_identity_arguments(oid) LIKE '%integer[]%'`,
    [name],
  );
  return rows[0]?.src ?? '';
}

const shapeChanged = (name: string) => new Error(`the statement of ${name} (the collections overload) was not found: the schema changed its shape`);

/**
 * The keyword statement the function runs for this question, as stored: 015 composes it
 * from its parts, 012's (every record scored) unless the question's words have more than
 * 8,000 postings among `collections` (the default of chatctx.keyword_prune_postings),
 * then the pruned one.
 */
async function keywordStatement(sql: PgliteSql, question: string, collections: string): Promise<string> {
  const src = await functionSource(sql, 'chatctx_keyword_search');
  const part = (tag: string) => new RegExp(`\\$${tag}\\$([\\s\\S]*?)\\$${tag}\\$`).exec(src)?.[1];
  const [head, every, pruned, tail] = ['h', 'e', 'p', 't'].map(part);
  if (!head || !every || !pruned || !tail) throw shapeChanged('chatctx_keyword_search');
  const [row] = await sql.query<{ postings: number }>(
    `SELECT coalesce(sum(t.df), 0)::int AS postings FROM collection_term_stats t
      WHERE t.lexeme IN (SELECT u.lexeme FROM unnest(to_tsvector('english', $1)) u) AND t.collection_id = ANY ($2::int[])`,
    [question, collections],
  );
  return head + (row!.postings > 8000 ? pruned : every) + tail;
}

/** The nearest-passage statements, as stored: the exact one (up to 3,000 visible passages) and the one through the HNSW index. */
async function vectorStatements(sql: PgliteSql): Promise<{ exact: string; index: string }> {
  const src = await functionSource(sql, 'chatctx_vector_search');
  const tail = /records_of constant text := '([\s\S]*?)';\n/.exec(src)?.[1];
  const heads = [...src.matchAll(/EXECUTE\s*'([\s\S]*?)'\s*\|\|\s*records_of/g)].map((m) => m[1]!);
  if (tail === undefined || heads.length !== 2) throw shapeChanged('chatctx_vector_search');
  const unquote = (text: string) => text.replace(/''/g, "'");
  return { exact: unquote(heads[0]! + tail), index: unquote(heads[1]! + tail) };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** Every scan of a plan, e.g. "Index Scan using record_passages_embedding_idx on record_passages: 40 rows × 1". */
function scans(node: PlanNode, into: string[] = []): string[] {
  if (node['Node Type'].includes('Scan') && node['Relation Name']) {
    const using = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    into.push(`${node['Node Type']}${using} on ${node['Relation Name']}: ${node['Actual Rows']} rows × ${node['Actual Loops']}`);
  }
  for (const child of node.Plans ?? []) scans(child, into);
  return into;
}

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** EXPLAIN ANALYZE of a statement prepared with these parameter types, run with these arguments and settings (as the function sets them). */
async function explain(sql: PgliteSql, statement: string, types: string, args: string, settings: Record<string, string> = {}) {
  return sql.transaction(async (tx) => {
    for (const [name, value] of Object.entries(settings)) await tx.query('SELECT set_config($1, $2, true)', [name, value]);
    await tx.query(`PREPARE bench_plan (${types}) AS ${statement}`);
    try {
      const [row] = await tx.query<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE bench_plan (${args})`);
      const raw = Object.values(row!)[0];
      const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode; 'Execution Time': number }];
      return { scans: [...new Set(scans(plan.Plan))], execution_ms: round(plan['Execution Time'], 2) };
    } finally {
      await tx.query('DEALLOCATE bench_plan');
    }
  });
}

/**
 * The plans both sides of the retrieval statement get for a question, as `collections` sees
 * the store, and what the dense side costs read exactly (index scans off: every visible
 * passage read and sorted), the alternative to the HNSW index for a small collection.
 */
async function retrievalPlans(sql: PgliteSql, question: string, vector: string, collections: readonly number[]) {
  const set = literal(`{${collections.join(',')}}`);
  // The question's lexemes, which 015's function stems once and passes to its statement.
  const [stemmed] = await sql.query<{ lexemes: string }>(`SELECT ARRAY(SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', $1)) u)::text AS lexemes`, [question]);
  const nearest = await vectorStatements(sql);
  const denseArgs = `${literal(vector)}, ${PASSAGES}, NULL, ${POOL}, ${set}`;
  // The settings chatctx_vector_search makes for its statement.
  const hnsw = { 'hnsw.ef_search': String(PASSAGES), 'hnsw.iterative_scan': 'relaxed_order' };
  return {
    dense_exact: await explain(sql, nearest.exact, 'vector, int, jsonb, int, int[]', denseArgs),
    dense_index: await explain(sql, nearest.index, 'vector, int, jsonb, int, int[]', denseArgs, { ...hnsw, enable_sort: 'off' }),
    keyword: await explain(
      sql,
      await keywordStatement(sql, question, `{${collections.join(',')}}`),
      'text, jsonb, jsonb, int, float8, float8, int[], text[]',
      `${literal(question)}, '[]', NULL, ${POOL}, 0.9, 0.4, ${set}, ${literal(stemmed!.lexemes)}`,
    ),
  };
}

/** The records the dense side returns for a vector among `collections`, by slug, best first; exact (no index) when asked. */
async function denseSlugs(sql: PgliteSql, vector: string, collections: readonly number[], exact: boolean): Promise<string[]> {
  return sql.transaction(async (tx) => {
    // The store's own setting for exact answers (schema/013): every visible passage read and sorted.
    if (exact) await tx.query("SELECT set_config('chatctx.exact_passages', '9999999', true)");
    const rows = await tx.query<{ slug: string }>(
      `SELECT r.slug FROM chatctx_vector_search($1::vector, NULL::jsonb, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)::int), $3::int, $4::int) d
         JOIN records r ON r.id = d.id::uuid ORDER BY d.similarity DESC, r.slug`,
      [vector, JSON.stringify(collections), PASSAGES, POOL],
    );
    return rows.map((r) => r.slug);
  });
}

/**
 * The guest's dense side on A against B, question by question: how many records each
 * returns, and how many of the exact nearest ones (all public passages read) each found.
 * Fewer on A than on B would mean the internal passages crowd public ones out of the
 * nearest-neighbour search: public answers that depend on what else the store holds.
 */
async function denseCheck(a: Store, b: Store, vectors: readonly string[]) {
  const rows: { a: number; b: number; exact: number; exactSame: boolean; foundA: number; foundB: number }[] = [];
  for (const vector of vectors) {
    const [onA, onB, exact] = [await denseSlugs(a.sql, vector, GUEST_SCOPE.collections, false), await denseSlugs(b.sql, vector, GUEST_SCOPE.collections, false), await denseSlugs(b.sql, vector, GUEST_SCOPE.collections, true)];
    const exactOnA = await denseSlugs(a.sql, vector, GUEST_SCOPE.collections, true);
    const found = (slugs: string[]) => slugs.filter((s) => exact.includes(s)).length;
    rows.push({ a: onA.length, b: onB.length, exact: exact.length, exactSame: exactOnA.join() === exact.join(), foundA: found(onA), foundB: found(onB) });
  }
  const sum = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((total, r) => total + pick(r), 0);
  return {
    questions: rows.length,
    fewer_records_on_a: rows.filter((r) => r.a < r.b).length,
    more_records_on_a: rows.filter((r) => r.a > r.b).length,
    records_a: sum((r) => r.a),
    records_b: sum((r) => r.b),
    records_exact: sum((r) => r.exact),
    exact_found_a: sum((r) => r.foundA),
    exact_found_b: sum((r) => r.foundB),
    recall_a: round(sum((r) => r.foundA) / Math.max(1, sum((r) => r.exact)), 4),
    recall_b: round(sum((r) => r.foundB) / Math.max(1, sum((r) => r.exact)), 4),
    exact_same_on_a_and_b: rows.filter((r) => r.exactSame).length,
  };
}

/** What a caller sees of an answer, by slug (ids differ between stores). */
const visible = (o: SearchKnowledgeOutput) =>
  JSON.stringify({ results: o.results.map((r) => r.slug), mode: o.retrieval.mode, total: o.retrieval.total_candidates, suggestions: o.suggestions, degraded: o.retrieval.degraded });

/** How often each index was scanned so far (Postgres' own counters). */
async function indexScans(sql: PgliteSql): Promise<Record<string, number>> {
  // The counters reach the view when a backend flushes them (at most once a second unless told).
  await sql.query('SELECT pg_stat_force_next_flush()');
  const rows = await sql.query<{ name: string; scans: number }>('SELECT indexrelname AS name, idx_scan::int AS scans FROM pg_stat_user_indexes WHERE indexrelname = ANY ($1::text[])', [
    `{${INDEXES.join(',')}}`,
  ]);
  return Object.fromEntries(rows.map((r) => [r.name, r.scans]));
}

interface Target {
  readonly label: 'A guest' | 'B guest' | 'A internal';
  readonly store: Store;
  readonly scope: CallerScope;
}

/** One round: every question on every target, A and B in turn (which goes first alternates), then the internal caller on A. */
async function timeRound(targets: readonly Target[], questions: readonly string[], roundIndex: number): Promise<Record<Target['label'], number[]>> {
  const times: Record<Target['label'], number[]> = { 'A guest': [], 'B guest': [], 'A internal': [] };
  const [a, b, internal] = targets as [Target, Target, Target];
  for (const [i, question] of questions.entries()) {
    for (const target of (i + roundIndex) % 2 === 0 ? [a, b, internal] : [b, a, internal]) {
      const started = performance.now();
      await target.store.search(question, target.scope);
      times[target.label].push(performance.now() - started);
    }
  }
  return times;
}

/** p50/p95 per target over all rounds, and A's guest p50 against B's: per round and overall. */
function summarise(rounds: readonly { load: number[]; times: Record<Target['label'], number[]> }[]) {
  const labels = ['A guest', 'B guest', 'A internal'] as const;
  const all = (label: Target['label']) => rounds.flatMap((r) => r.times[label]);
  const perRound = rounds.map((r, i) => ({
    round: i + 1,
    load_average_1m: round(r.load[0]!, 2),
    ...Object.fromEntries(labels.map((l) => [l, { p50_ms: round(median(r.times[l])), p95_ms: round(p95(r.times[l])) }])),
    ratio_p50: round(median(r.times['A guest']) / median(r.times['B guest']), 3),
    internal_ratio_p50: round(median(r.times['A internal']) / median(r.times['B guest']), 3),
  }));
  return {
    stores: Object.fromEntries(labels.map((l) => [l, { searches: all(l).length, p50_ms: round(median(all(l))), p95_ms: round(p95(all(l))) }])),
    ratio_p50_median_of_rounds: round(median(perRound.map((r) => r.ratio_p50)), 3),
    ratio_of_p50s: round(median(all('A guest')) / median(all('B guest')), 3),
    ratio_of_p95s: round(p95(all('A guest')) / p95(all('B guest')), 3),
    internal_ratio_p50_median_of_rounds: round(median(perRound.map((r) => r.internal_ratio_p50)), 3),
    per_round: perRound,
  };
}

/** Both stores as a local server builds its own: B the starter corpus, A the same and the internal collection. */
async function buildStores(embedder: Embedder, cached: CachedEmbedder, opened: PgliteSql[]) {
  progress('building store B (starter corpus) and store A (starter corpus + internal)');
  const bSql = await starterStore(embedder);
  opened.push(bSql);
  const aSql = await starterStore(embedder);
  opened.push(aSql);
  const internal = await addInternal(aSql, opts.internal, cached);
  progress(`A: ${internal.imported} internal records imported in ${internal.importSeconds} s, embedded in ${internal.embedding.seconds} s (${internal.embedding.encoded} of ${internal.embedding.passages} passages by the encoder)`);
  // What a local server does at start (PGlite has no autovacuum): fresh statistics for the planner.
  for (const sql of opened) await sql.query('ANALYZE');
  const a: Store = { name: 'A', sql: aSql, internalId: internal.id, search: searcher(aSql, embedder) };
  const b: Store = { name: 'B', sql: bSql, search: searcher(bSql, embedder) };
  const internalScope: CallerScope = { collections: [GUEST_SCOPE.collections[0]!, internal.id], feedback: true };
  const targets: Target[] = [
    { label: 'A guest', store: a, scope: GUEST_SCOPE },
    { label: 'B guest', store: b, scope: GUEST_SCOPE },
    { label: 'A internal', store: a, scope: internalScope },
  ];
  return { a, b, internal, internalScope, targets };
}

/** Each question once per store and caller (the encoder runs, the embedding is then cached), the guest's answers on A and B compared. */
async function compareGuestAnswers(a: Store, b: Store, internalScope: CallerScope, questions: readonly string[]) {
  const differing: string[] = [];
  for (const question of questions) {
    const [onA, onB] = [await a.search(question, GUEST_SCOPE), await b.search(question, GUEST_SCOPE)];
    await a.search(question, internalScope);
    if (visible(onA) !== visible(onB)) differing.push(question);
  }
  return { questions: questions.length, identical: questions.length - differing.length, differing: differing.slice(0, 10) };
}

/** Every retrieval statement's plans for the first `--explain` questions, on A and B as the guest and on A as the internal caller. */
async function allPlans(a: Store, b: Store, internalScope: CallerScope, questions: readonly string[], vectors: readonly string[]) {
  const plans = [];
  for (const [i, question] of questions.slice(0, opts.explain).entries()) {
    plans.push({
      question,
      a_guest: await retrievalPlans(a.sql, question, vectors[i]!, GUEST_SCOPE.collections),
      b_guest: await retrievalPlans(b.sql, question, vectors[i]!, GUEST_SCOPE.collections),
      a_internal: await retrievalPlans(a.sql, question, vectors[i]!, internalScope.collections),
    });
  }
  return plans;
}

/** One run on stores built for it: the answers compared, the dense side checked, the plans (first run only) and the timed rounds. */
async function oneRun(run: number, embedder: Embedder, cached: CachedEmbedder, questions: readonly string[]) {
  const opened: PgliteSql[] = [];
  try {
    const loadBefore = loadavg();
    const { a, b, internal, internalScope, targets } = await buildStores(embedder, cached, opened);
    progress(`run ${run + 1}/${opts.runs}: ${questions.length} questions, each asked once per store and caller (the encoder runs), guest answers compared`);
    const guestAnswers = await compareGuestAnswers(a, b, internalScope, questions);
    progress('dense side and plans');
    const vectors = (await embedder.embed(questions)).map(vectorLiteral);
    const denseResult = await denseCheck(a, b, vectors);
    const plans = run === 0 ? await allPlans(a, b, internalScope, questions, vectors) : [];
    const scansBefore = { A: await indexScans(a.sql), B: await indexScans(b.sql) };
    const rounds = [];
    for (let r = 0; r < opts.rounds; r++) {
      const load = loadavg();
      rounds.push({ load, times: await timeRound(targets, questions, r) });
      progress(`round ${r + 1}/${opts.rounds} done (load ${load.map((l) => l.toFixed(2)).join(' ')})`);
    }
    const scansAfter = { A: await indexScans(a.sql), B: await indexScans(b.sql) };
    const counts = await a.sql.query<{ collection_id: number; passages: number }>('SELECT collection_id, count(*)::int AS passages FROM record_passages GROUP BY collection_id ORDER BY 1');
    return {
      internal_records: internal.imported,
      passages: { a: Object.fromEntries(counts.map((c) => [c.collection_id === 1 ? 'public' : 'internal', c.passages])), b: (await b.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM record_passages'))[0]!.n },
      import_seconds: internal.importSeconds,
      embedding: internal.embedding,
      load_before: loadBefore.map((l) => round(l, 2)),
      load_after: loadavg().map((l) => round(l, 2)),
      summary: summarise(rounds),
      guest_answers: guestAnswers,
      dense_check: denseResult,
      index_scans_during_rounds: Object.fromEntries(
        (['A', 'B'] as const).map((s) => [s, Object.fromEntries(INDEXES.map((name) => [name, (scansAfter[s][name] ?? 0) - (scansBefore[s][name] ?? 0)]))]),
      ),
      plans,
    };
  } finally {
    await Promise.all(opened.map((sql) => sql.close()));
  }
}

type Run = Awaited<ReturnType<typeof oneRun>>;

/** The medians over runs of each run's figures, each run's A / B ratio, and the load at every round. */
function acrossRuns(runs: readonly Run[]) {
  const mid = (pick: (s: Run['summary']) => number) => round(median(runs.map((r) => pick(r.summary))), 3);
  return {
    guest_a_p50_ms: mid((s) => s.stores['A guest']!.p50_ms),
    guest_a_p95_ms: mid((s) => s.stores['A guest']!.p95_ms),
    guest_b_p50_ms: mid((s) => s.stores['B guest']!.p50_ms),
    guest_b_p95_ms: mid((s) => s.stores['B guest']!.p95_ms),
    internal_p50_ms: mid((s) => s.stores['A internal']!.p50_ms),
    ratio_p50: mid((s) => s.ratio_p50_median_of_rounds),
    ratio_p50_each_run: runs.map((r) => r.summary.ratio_p50_median_of_rounds),
    internal_ratio_p50: mid((s) => s.internal_ratio_p50_median_of_rounds),
    load_average_1m_each_round: runs.flatMap((r) => r.summary.per_round.map((p) => p.load_average_1m)),
  };
}

const embedder = (await createEmbedder({ provider: 'use-lite' }))!;
try {
  const measuredOn = machine();
  const cached = await CachedEmbedder.open(embedder, resolve(opts.cacheDir));
  const questions = await sample(opts.questions);
  // The encoder's first call loads its model: on a busy machine it can outlast the search's embedding deadline,
  // and the first question would then be answered by keywords alone on one store (a degraded answer, not a leak).
  await embedder.embed(['warm up the encoder']);
  const runs: Run[] = [];
  for (let run = 0; run < opts.runs; run++) runs.push(await oneRun(run, embedder, cached, questions));
  const report = {
    ...measuredOn,
    quick: opts.quick ?? false,
    internal_records: runs[0]!.internal_records,
    passages: runs[0]!.passages,
    questions: questions.length,
    rounds: opts.rounds,
    runs: opts.runs,
    summary: acrossRuns(runs),
    guest_answers: runs.map((r) => r.guest_answers),
    dense_check: runs.map((r) => r.dense_check),
    plans: runs[0]!.plans,
    each_run: runs.map(({ plans: _plans, ...rest }) => rest),
  };
  console.log(renderCollections(report));
  for (const [i, run] of report.each_run.entries()) {
    const { per_round, ...overall } = run.summary;
    console.log(`run ${i + 1}: ${JSON.stringify({ ...overall, rounds: per_round.map((r) => r.ratio_p50), guest_answers: run.guest_answers, embedding: run.embedding, load_before: run.load_before, load_after: run.load_after })}`);
  }
  await mkdir(dirname(resolve(opts.out)), { recursive: true });
  await writeFile(resolve(opts.out), JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${opts.out}`);
  if (opts.docs) console.log(`wrote ${recordInDocs('collections', report).join(' and ')}`);
} catch (error) {
  console.error(`bench:collections failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await embedder.close?.();
}
