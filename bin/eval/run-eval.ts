/**
 * The retrieval evaluation: loads a BEIR dataset into a fresh embedded store
 * through the same import and embedding code the service uses, runs every query
 * through the same ranking function `search_knowledge` uses (keyword-only,
 * vector-only, hybrid), adds an independent BM25 reference from an npm library,
 * and reports nDCG@10, Recall@10/100, MRR@10 and latency.
 *
 * Nothing is tuned here on the reported queries: an optional dense-weight sweep
 * runs on the fixed "tune" half (split by query id) and is reported beside the
 * "test" half and the full set.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import type { RecordFile } from '../../lambdas/records/record-schema.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { embedRecords, recordsToEmbed, type EmbedProgress } from '../../lambdas/embeddings/record-embeddings.ts';
import { rankCandidates, DENSE_WEIGHT, type QueryVector, type RankMode } from '../../lambdas/retrieval/rank.ts';
import type { CandidateOptions } from '../../lambdas/retrieval/candidate-search.ts';
import { ResidentKeywordIndex } from '../../lambdas/retrieval/resident-keyword-index.ts';
import { DEFAULT_SYNONYMS } from '../../lambdas/records/query-synonyms.ts';
import { embedQuery } from '../../lambdas/retrieval/query-embedding.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { searchKnowledge, type SearchDeps } from '../../lambdas/retrieval/search-service.ts';
import { searchKnowledgeInput } from '../../schema/tools.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';
import { loadBeirDataset, type BeirDataset, type BeirDoc, type BeirQuery } from './beir.ts';
import { evaluateRun, percentile, splitByQueryId, type RunMetrics } from './metrics.ts';
import { Bm25Reference } from './bm25-reference.ts';

export interface EvalOptions {
  readonly datasetDir: string;
  /** Use guidance records from this folder as the corpus (qrels name slugs). */
  readonly recordsDir?: string;
  /** Evaluate only the first N queries. */
  readonly queries?: number;
  /** Undefined: keyword and BM25 reference only. Embeds the documents (the CLI gives it a disk cache). */
  readonly embedder?: Embedder;
  /**
   * Embeds the queries: the encoder itself, with no cache of its own, so that a
   * query-embedding cache miss in the store really runs the encoder. @default embedder
   */
  readonly queryEmbedder?: Embedder;
  /** Dense weights to try on the tune half. */
  readonly sweep?: readonly number[];
  /** Where the keyword side is scored: the store's statement (the default) or, as the local server does, a copy in memory. */
  readonly keywordIndex?: 'memory' | 'store';
  /** Where progress lines go (stderr in the CLI). */
  readonly log: (line: string) => void;
  /** Progress callback for long steps (a progress bar in the CLI). */
  readonly progress?: (step: string) => (p: EmbedProgress) => void;
}

export interface ModeReport extends RunMetrics {
  latency_ms_p50: number;
  latency_ms_p95: number;
}

export type ModeName = 'hybrid' | 'keyword' | 'vector' | 'bm25';

export interface EvalReport {
  dataset: string;
  cores: number;
  documents: number;
  queries: number;
  passages: number;
  dense_weight: number;
  /** Where the keyword side was scored: the store's statement, or the copy in memory the local server uses. */
  keyword_index: 'memory' | 'store';
  modes: Partial<Record<ModeName, ModeReport>>;
  /** nDCG@10 on the fixed halves (tune: where any tuning happened; test: never tuned on). */
  halves: { tune: Partial<Record<ModeName, number>>; test: Partial<Record<ModeName, number>> };
  /**
   * The tool path (`search_knowledge`, hybrid, no answer cache), in process: with the
   * query embedding in the store's cache (hit) and not (miss). `encoder_calls` counts
   * the query embeddings the encoder computed during the misses: one per miss when
   * nothing else served them.
   */
  tool_latency_ms:
    | { cache_miss_p50: number; cache_miss_p95: number; cache_hit_p50: number; cache_hit_p95: number; misses: number; encoder_calls: number; load_average_1m: number }
    | undefined;
  /**
   * What an agent gets from `search_knowledge` (threshold applied, default 5 results):
   * share of queries whose first result is relevant, whose results hold a relevant
   * record, and that got no_match — with the embedder (hybrid) and without (keyword_fallback).
   */
  tool_answers: Partial<Record<'hybrid' | 'keyword_fallback', { top1_relevant: number; any_relevant: number; no_match: number }>>;
  sweep?: { dense_weight: number; tune_ndcg_at_10: number; test_ndcg_at_10: number }[];
  timings_s: Record<string, number>;
}

const POOL = 100;

/** An embedder that counts the texts it was asked to embed. */
interface CountingEmbedder extends Embedder {
  readonly calls: () => number;
}

function countingEmbedder(inner: Embedder): CountingEmbedder {
  let calls = 0;
  return {
    provider: inner.provider,
    model: inner.model,
    dimensions: inner.dimensions,
    embed: (texts, signal) => {
      calls += texts.length;
      return inner.embed(texts, signal);
    },
    calls: () => calls,
  };
}

/** A slug for a BEIR doc id; collisions get a numeric suffix. */
function slugFor(id: string, used: Set<string>): string {
  const base = ('doc-' + id.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')).slice(0, 110).replace(/-+$/, '');
  let slug = base;
  for (let i = 2; used.has(slug); i++) slug = `${base}-${i}`;
  used.add(slug);
  return slug;
}

/** A BEIR document as a guidance record: title → title, text → recommendation. */
export function beirDocToRecord(doc: BeirDoc, slug: string): RecordFile {
  const text = doc.text.trim() || doc.title.trim() || doc.id;
  const title = doc.title.trim() || text.split(/\s+/).slice(0, 12).join(' ');
  return {
    slug,
    title,
    topic: 'data',
    task_types: [],
    recommendation: text,
    applies_to: [],
    supersedes: [],
    conditions: [],
    exceptions: [],
    pitfalls: [],
    verification_checks: [],
    confidence: 'medium',
    sources: [{ title: 'BEIR corpus document', url: `https://beir.invalid/${encodeURIComponent(doc.id)}`, relation: 'context' }],
  };
}

function recordToDoc(record: RecordFile): BeirDoc {
  return { id: record.slug, title: record.title, text: [record.summary, record.recommendation, record.rationale].filter(Boolean).join(' ') };
}

function report(run: Map<string, string[]>, qrels: Qrels, ids: string[], latencies: number[]): ModeReport {
  return { ...evaluateRun(run, qrels, ids), latency_ms_p50: percentile(latencies, 50), latency_ms_p95: percentile(latencies, 95) };
}

type Timed = <T>(name: string, work: () => Promise<T>) => Promise<T>;
type Qrels = BeirDataset['qrels'];

/** Everything the phases of one evaluation share. */
interface EvalContext {
  readonly options: EvalOptions;
  readonly sql: PgliteSql;
  readonly dataset: BeirDataset;
  readonly queries: readonly BeirQuery[];
  /** Record id → BEIR doc id. */
  readonly docOf: ReadonlyMap<string, string>;
  /** Record slug → BEIR doc id. */
  readonly docIdOfSlug: ReadonlyMap<string, string>;
  readonly deps: SearchDeps;
  readonly timed: Timed;
  /** The keyword side from memory (`keywordIndex: 'memory'`). */
  readonly resident?: CandidateOptions['resident'];
}

interface RankedRuns {
  readonly runs: Map<ModeName, Map<string, string[]>>;
  readonly latencies: Map<ModeName, number[]>;
  /** The query embedding each query got (for the weight sweep). */
  readonly vectors: Map<string, QueryVector | undefined>;
}

export async function runEvaluation(options: EvalOptions): Promise<EvalReport> {
  const timings: Record<string, number> = {};
  const timed: Timed = async (name, work) => {
    const t = performance.now();
    const result = await work();
    timings[name] = Math.round((performance.now() - t) / 100) / 10;
    options.log(`${name}: ${timings[name]} s`);
    return result;
  };
  const corpus = await loadCorpus(options, timed);
  const sql = await PgliteSql.open();
  try {
    const { docOf, passages } = await loadStore(sql, corpus, options, timed);
    const pepper = randomBytes(32);
    const queryEmbedder = options.embedder && countingEmbedder(options.queryEmbedder ?? options.embedder);
    const resident = options.keywordIndex === 'memory' ? await residentIndex(sql) : undefined;
    const deps: SearchDeps = {
      sql, secrets: { pepper: async () => pepper }, embedder: queryEmbedder, logger: silentLogger, embedTimeoutMs: 10_000, keywordIndex: resident?.index,
    };
    const ctx: EvalContext = { options, sql, dataset: corpus.dataset, queries: corpus.queries, docOf, docIdOfSlug: corpus.docIdOfSlug, deps, timed, resident };

    const ranked = await rankQueries(ctx);
    const reference = await timed('bm25 reference', async () => referenceRun(corpus.dataset, corpus.queries));
    ranked.runs.set('bm25', reference.run);
    ranked.latencies.set('bm25', reference.times);
    const tool = await timed('tool path', () => toolPath(ctx));

    const out: EvalReport = {
      dataset: corpus.dataset.name,
      cores: cpus().length,
      documents: corpus.records.length,
      queries: corpus.queries.length,
      passages,
      dense_weight: DENSE_WEIGHT,
      keyword_index: options.keywordIndex ?? 'store',
      ...scoreRuns(ranked, corpus.dataset.qrels, corpus.queries),
      tool_latency_ms: tool.latency,
      tool_answers: tool.answers,
      timings_s: timings,
    };
    if (options.embedder && options.sweep && options.sweep.length > 0) out.sweep = await sweepWeights(ctx, ranked.vectors, options.sweep);
    return out;
  } finally {
    await sql.close();
  }
}

/** The local server's copy of the keyword tables, loaded once the corpus is in. */
async function residentIndex(sql: PgliteSql): Promise<NonNullable<CandidateOptions['resident']>> {
  const index = new ResidentKeywordIndex(sql);
  const snapshot = await index.load();
  if (!snapshot) throw new Error('the keyword index did not load');
  return { index, snapshot };
}

/** The dataset, and its documents as records: the BEIR corpus, or guidance records with their own qrels. */
async function loadCorpus(options: EvalOptions, timed: Timed) {
  const guidance = options.recordsDir ? await readRecordFiles(options.recordsDir) : undefined;
  const dataset = await timed('load dataset', () => loadBeirDataset(options.datasetDir, guidance ? { corpus: guidance.map(recordToDoc) } : {}));
  const used = new Set<string>();
  const records = guidance ?? dataset.corpus.map((doc) => beirDocToRecord(doc, slugFor(doc.id, used)));
  const docIdOfSlug = new Map(records.map((r, i) => [r.slug, guidance ? r.slug : dataset.corpus[i]!.id]));
  const queries = options.queries ? dataset.queries.slice(0, options.queries) : dataset.queries;
  options.log(`${dataset.name}: ${records.length} documents, ${queries.length} queries, ${cpus().length} cores`);
  return { dataset, records, docIdOfSlug, queries };
}

/** Imports and embeds the corpus through the service's own code, then refreshes planner statistics. */
async function loadStore(sql: PgliteSql, corpus: Awaited<ReturnType<typeof loadCorpus>>, options: EvalOptions, timed: Timed) {
  await migrate(sql);
  const { records } = corpus;
  await timed('import', async () => {
    const tick = options.progress?.('import');
    for (let start = 0; start < records.length; start += 500) {
      await importRecords(sql, records.slice(start, start + 500), { approve: true });
      tick?.({ done: Math.min(records.length, start + 500), total: records.length });
    }
  });
  const rows = await sql.query<{ id: string; slug: string }>('SELECT id::text AS id, slug FROM records');
  const docOf = new Map(rows.map((r) => [r.id, corpus.docIdOfSlug.get(r.slug)!]));
  const embedder = options.embedder;
  if (embedder) {
    await timed('embed documents', async () => {
      // Bulk load: building the HNSW index once after the inserts is faster than
      // growing it row by row. The indexes (the store's, and the public collection's own)
      // are recreated from their own definitions.
      const indexes = await sql.query<{ name: string; indexdef: string }>(
        "SELECT indexname AS name, indexdef FROM pg_indexes WHERE indexname IN ('record_passages_embedding_idx', 'record_passages_public_embedding_idx')",
      );
      for (const index of indexes) await sql.query(`DROP INDEX ${index.name}`);
      const stale = await recordsToEmbed(sql, embedder.model);
      await embedRecords(sql, embedder, stale, { batchSize: 64, onProgress: options.progress?.('embed') });
      for (const index of indexes) await sql.query(index.indexdef);
    });
  }
  // As the local server does at start: PGlite never refreshes planner statistics itself.
  await sql.query('ANALYZE');
  const [count] = await sql.query<{ passages: number }>('SELECT count(*)::int AS passages FROM record_passages');
  return { docOf, passages: count!.passages };
}

/**
 * Quality and ranking latency: every query through `rankCandidates`, per mode.
 * Latency is the ranking call plus, for hybrid and vector, getting the query
 * embedding. Hybrid runs first, so its latency includes embedding the query on a
 * cache miss (the encoder runs: the query embedder has no cache of its own); vector
 * mode then finds the embedding in the store's cache.
 */
async function rankQueries(ctx: EvalContext): Promise<RankedRuns> {
  const modes: RankMode[] = ctx.deps.embedder ? ['hybrid', 'keyword', 'vector'] : ['keyword'];
  const runs = new Map<ModeName, Map<string, string[]>>(modes.map((m) => [m, new Map()]));
  const latencies = new Map<ModeName, number[]>(modes.map((m) => [m, []]));
  const vectors = new Map<string, QueryVector | undefined>();
  await ctx.timed('queries', async () => {
    const tick = ctx.options.progress?.('queries');
    for (const [i, query] of ctx.queries.entries()) {
      for (const mode of modes) {
        const t = performance.now();
        let vector: QueryVector | undefined;
        if (mode !== 'keyword') vector = (await embedQuery(ctx.deps, query.text)).vector;
        const ranked = await rankCandidates(ctx.sql, query.text, vector, { mode, filter: {}, pool: POOL, synonyms: DEFAULT_SYNONYMS, resident: ctx.resident });
        latencies.get(mode)!.push(performance.now() - t);
        if (vector && !vectors.has(query.id)) vectors.set(query.id, await asLiteral(ctx.sql, vector));
        runs.get(mode)!.set(query.id, ranked.candidates.map((c) => ctx.docOf.get(c.id)!));
      }
      tick?.({ done: i + 1, total: ctx.queries.length });
    }
  });
  return { runs, latencies, vectors };
}

/** The vector itself: the weight sweep runs after the tool path has emptied the embedding cache. */
async function asLiteral(sql: Sql, vector: QueryVector): Promise<QueryVector | undefined> {
  if (vector.literal !== undefined) return { literal: vector.literal };
  const [row] = await sql.query<{ v: string }>('SELECT embedding::text AS v FROM embedding_cache WHERE cache_key = $1', [vector.cacheKey ?? null]);
  return row ? { literal: row.v } : undefined;
}

/** An independent BM25 (wink-bm25-text-search) over the same documents. */
function referenceRun(dataset: BeirDataset, queries: readonly BeirQuery[]) {
  const index = new Bm25Reference(dataset.corpus);
  const run = new Map<string, string[]>();
  const times: number[] = [];
  for (const query of queries) {
    const t = performance.now();
    run.set(query.id, index.search(query.text, POOL));
    times.push(performance.now() - t);
  }
  return { run, times };
}

/**
 * The full tool path: with the embedder twice per query (a cache miss, then a
 * hit) and once without it, scoring what the agent would actually be shown.
 */
async function toolPath(ctx: EvalContext): Promise<{ latency: EvalReport['tool_latency_ms']; answers: EvalReport['tool_answers'] }> {
  const embedder = ctx.deps.embedder as CountingEmbedder | undefined;
  await ctx.sql.query('DELETE FROM embedding_cache');
  const callsBefore = embedder?.calls() ?? 0;
  const miss: number[] = [];
  const hit: number[] = [];
  const tally = { hybrid: { top1: 0, any: 0, none: 0 }, keyword_fallback: { top1: 0, any: 0, none: 0 } };
  const score = (bucket: { top1: number; any: number; none: number }, qid: string, slugs: string[]) => {
    const relevant = ctx.dataset.qrels.get(qid) ?? new Map<string, number>();
    const docs = slugs.map((s) => ctx.docIdOfSlug.get(s)!);
    if (docs.length === 0) bucket.none += 1;
    if ((relevant.get(docs[0]!) ?? 0) > 0) bucket.top1 += 1;
    if (docs.some((d) => (relevant.get(d) ?? 0) > 0)) bucket.any += 1;
  };
  for (const query of ctx.queries) {
    const input = searchKnowledgeInput.parse({ query: query.text.slice(0, 2000).padEnd(2, '?') });
    if (embedder) {
      for (const bucket of [miss, hit]) {
        const t = performance.now();
        const out = await searchKnowledge(ctx.deps, input);
        bucket.push(performance.now() - t);
        if (bucket === miss) score(tally.hybrid, query.id, out.results.map((r) => r.slug));
      }
    }
    const lexical = await searchKnowledge({ ...ctx.deps, embedder: undefined }, input);
    score(tally.keyword_fallback, query.id, lexical.results.map((r) => r.slug));
  }
  const n = ctx.queries.length || 1;
  const answers: EvalReport['tool_answers'] = {};
  for (const key of embedder ? (['hybrid', 'keyword_fallback'] as const) : (['keyword_fallback'] as const)) {
    answers[key] = { top1_relevant: tally[key].top1 / n, any_relevant: tally[key].any / n, no_match: tally[key].none / n };
  }
  const latency = embedder
    ? {
        cache_miss_p50: percentile(miss, 50),
        cache_miss_p95: percentile(miss, 95),
        cache_hit_p50: percentile(hit, 50),
        cache_hit_p95: percentile(hit, 95),
        misses: miss.length,
        encoder_calls: embedder.calls() - callsBefore,
        load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
      }
    : undefined;
  return { latency, answers };
}

/** Every mode's metrics on all queries, and its nDCG@10 on each fixed half. */
function scoreRuns(ranked: RankedRuns, qrels: Qrels, queries: readonly BeirQuery[]): Pick<EvalReport, 'modes' | 'halves'> {
  const ids = queries.map((q) => q.id);
  const halves = splitByQueryId(ids);
  const out: Pick<EvalReport, 'modes' | 'halves'> = { modes: {}, halves: { tune: {}, test: {} } };
  for (const [mode, run] of ranked.runs) {
    out.modes[mode] = report(run, qrels, ids, ranked.latencies.get(mode)!);
    out.halves.tune[mode] = evaluateRun(run, qrels, halves.tune).ndcg_at_10;
    out.halves.test[mode] = evaluateRun(run, qrels, halves.test).ndcg_at_10;
  }
  return out;
}

/** nDCG@10 of hybrid ranking at each dense weight, on both halves (choose on tune only). */
async function sweepWeights(ctx: EvalContext, vectors: ReadonlyMap<string, QueryVector | undefined>, weights: readonly number[]) {
  const halves = splitByQueryId(ctx.queries.map((q) => q.id));
  const sweep: NonNullable<EvalReport['sweep']> = [];
  for (const weight of weights) {
    const run = new Map<string, string[]>();
    for (const query of ctx.queries) {
      const ranked = await rankCandidates(ctx.sql, query.text, vectors.get(query.id), { mode: 'hybrid', filter: {}, pool: POOL, denseWeight: weight, synonyms: DEFAULT_SYNONYMS, resident: ctx.resident });
      run.set(query.id, ranked.candidates.map((c) => ctx.docOf.get(c.id)!));
    }
    sweep.push({
      dense_weight: weight,
      tune_ndcg_at_10: evaluateRun(run, ctx.dataset.qrels, halves.tune).ndcg_at_10,
      test_ndcg_at_10: evaluateRun(run, ctx.dataset.qrels, halves.test).ndcg_at_10,
    });
    ctx.options.log(`sweep dense weight ${weight}: tune ${sweep.at(-1)!.tune_ndcg_at_10.toFixed(4)}`);
  }
  return sweep;
}

/** The report as the table docs/quality.md quotes. */
export function formatReport(r: EvalReport): string {
  const f = (v: number | undefined, d = 3) => (v === undefined || Number.isNaN(v) ? '–' : v.toFixed(d));
  const lines = [
    `dataset ${r.dataset}: ${r.documents} documents (${r.passages} passages embedded), ${r.queries} queries, ${r.cores} cores, dense weight ${r.dense_weight}`,
    '',
    '| mode | nDCG@10 | Recall@10 | Recall@100 | MRR@10 | p50 ms | p95 ms | nDCG@10 tune half | nDCG@10 test half |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const mode of ['hybrid', 'keyword', 'vector', 'bm25'] as const) {
    const m = r.modes[mode];
    if (!m) continue;
    const label = mode === 'bm25' ? 'bm25 (reference: wink-bm25-text-search)' : mode;
    lines.push(
      `| ${label} | ${f(m.ndcg_at_10)} | ${f(m.recall_at_10)} | ${f(m.recall_at_100)} | ${f(m.mrr_at_10)} | ${f(m.latency_ms_p50, 1)} | ${f(m.latency_ms_p95, 1)} | ${f(r.halves.tune[mode])} | ${f(r.halves.test[mode])} |`,
    );
  }
  if (r.tool_latency_ms) {
    lines.push(
      '',
      `search_knowledge in process (hybrid, whole tool path, no answer cache): query embedding not cached (the encoder ran ` +
        `${r.tool_latency_ms.encoder_calls} times for ${r.tool_latency_ms.misses} searches) p50 ${f(r.tool_latency_ms.cache_miss_p50, 1)} ms, ` +
        `p95 ${f(r.tool_latency_ms.cache_miss_p95, 1)} ms; cached p50 ${f(r.tool_latency_ms.cache_hit_p50, 1)} ms, p95 ${f(r.tool_latency_ms.cache_hit_p95, 1)} ms ` +
        `(load average ${r.tool_latency_ms.load_average_1m})`,
    );
  }
  const answers = Object.entries(r.tool_answers);
  if (answers.length > 0) {
    lines.push('', '| search_knowledge answers | first result relevant | a relevant result shown | no_match |', '|---|---|---|---|');
    for (const [mode, a] of answers) lines.push(`| ${mode} | ${f(a.top1_relevant)} | ${f(a.any_relevant)} | ${f(a.no_match)} |`);
  }
  if (r.sweep) {
    lines.push('', '| dense weight | nDCG@10 tune half | nDCG@10 test half |', '|---|---|---|');
    for (const s of r.sweep) lines.push(`| ${s.dense_weight} | ${f(s.tune_ndcg_at_10, 4)} | ${f(s.test_ndcg_at_10, 4)} |`);
  }
  lines.push('', `timings (s): ${Object.entries(r.timings_s).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  return lines.join('\n');
}
