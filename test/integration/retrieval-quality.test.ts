/**
 * Ranking and relevance regressions fail CI, on the starter corpus through
 * search_knowledge as agents call it, hybrid with the real sentence encoder and keyword
 * only:
 *  - the test half of both evaluation sets (real developers' questions, split by
 *    record; questions written with the records), with floors just under what was
 *    measured (docs/quality.md, "Answer quality"); every result is checked against the
 *    contract's shape;
 *  - what the agent-phrasing issue named, as behaviours: stack words do not sink a
 *    match, an error message finds its record, a synonym finds its record, a near miss
 *    stays `no_match`;
 *  - SciFact (BEIR), keyword only, first 100 test queries over the full corpus, when
 *    the shared evaluation data is present (it is in CI); skipped, visibly, elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { runEvaluation } from '../../bin/eval/run-eval.ts';
import { answerAll, honestyMetrics, loadQuestionSet, type HonestyMetrics } from '../../bin/eval/guidance-eval.ts';
import { createToolHandlers } from '../../lambdas/tools/tool-handlers.ts';
import { changeSynonym } from '../../lambdas/records/query-synonyms.ts';
import type { SearchKnowledgeOutput } from '../../schema/tools.ts';
import { memoryStore, seededUseLite, type MemoryStore } from '../support/store.ts';

const REAL = fileURLToPath(new URL('../fixtures/real-questions/', import.meta.url));
const WRITTEN = fileURLToPath(new URL('../fixtures/guidance-eval/', import.meta.url));
const SCIFACT = fileURLToPath(new URL('../../../shared/eval/scifact/', import.meta.url));
const quiet = () => {};

let store: MemoryStore;
let modes: { name: 'hybrid' | 'keyword'; tools: MemoryStore['tools'] }[];

beforeAll(async () => {
  store = await memoryStore({ embedder: await seededUseLite() });
  const keywordOnly = createToolHandlers({ sql: store.sql, secrets: { pepper: async () => store.pepper }, logger: store.logger });
  modes = [
    { name: 'hybrid', tools: store.tools },
    { name: 'keyword', tools: keywordOnly },
  ];
}, 300_000);

afterAll(async () => {
  await store?.sql.close();
});

const search = async (tools: MemoryStore['tools'], args: Record<string, unknown>) => {
  const result = await tools.search_knowledge(args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as SearchKnowledgeOutput;
};

describe('retrieval quality, test halves', () => {
  it.each([
    ['real', REAL, 'record'],
    ['written', WRITTEN, 'id'],
  ] as const)('%s questions: what is shown is what applies, in both modes, in the contract\'s shape', async (name, dir, split) => {
    const set = await loadQuestionSet(name, dir, split);
    const held = set.questions.filter((q) => !set.tune.has(q.id));
    for (const { name: mode, tools } of modes) {
      const answers = await answerAll(held, async (args) => {
        const out = await search(tools, args as Record<string, unknown>);
        for (const r of out.results) expect(contractResult.safeParse(r).success, `${mode}: ${JSON.stringify(r).slice(0, 200)}`).toBe(true);
        return out;
      });
      expectFloors(honestyMetrics(answers), FLOORS[name][mode], `${name}, ${mode}`);
    }
  }, 300_000);
});

describe("questions in an agent's own words", () => {
  it('stack words do not sink a match: the driver, framework, platform and version named in the question', async () => {
    for (const { name, tools } of modes) {
      for (const [bare, withStack, slug] of [
        ['connection pool exhausted: too many clients', 'connection pool exhausted: too many clients from node-postgres in our Django pods on EKS (PostgreSQL 15)', 'bound-connection-pools-so-all-instances-fit-under-max-connections'],
        ['liveness probe restarts pods when the database is slow', 'liveness probe restarts pods when the database is slow, Spring Boot 3 service on GKE', 'use-shallow-liveness-probes-and-dependency-aware-readiness-probes'],
      ]) {
        expect((await search(tools, { query: bare })).results[0]?.slug, `${name}: ${bare}`).toBe(slug);
        const out = await search(tools, { query: withStack });
        expect(out.results[0]?.slug, `${name}: ${withStack}`).toBe(slug);
      }
      // The named stack is an applicability signal, said in the summary; nothing shown declares Django, so the fallback says so.
      const out = await search(tools, { query: 'connection pool exhausted: too many clients from node-postgres in our Django pods on EKS (PostgreSQL 15)' });
      expect(out.query_summary).toBe('PostgreSQL, Node.js, Django, Kubernetes, AWS');
      expect(out.retrieval.technology_filter_fallback).toBe(false);
    }
  });

  it('an error message finds its record, as the tool printed it', async () => {
    for (const { name, tools } of modes) {
      for (const [query, slug] of [
        ['FATAL: sorry, too many clients already', 'bound-connection-pools-so-all-instances-fit-under-max-connections'],
        ['Warning: Each child in a list should have a unique "key" prop.', 'use-stable-keys-for-dynamic-react-lists'],
        ['error: ERROR: canceling statement due to statement timeout in our nightly report', 'set-statement-and-lock-timeouts-on-postgresql-application-roles'],
      ]) {
        expect((await search(tools, { query })).results[0]?.slug, `${name}: ${query}`).toBe(slug);
      }
    }
  });

  it('a synonym finds its record: a default acronym the record never spells out, and one an owner adds', async () => {
    const own = await memoryStore();
    try {
      for (const { name, tools } of [...modes, { name: 'keyword (own store)', tools: own.tools }]) {
        const out = await search(tools, { query: 'otel collector setup for our Node.js service traces' });
        expect(out.results[0]?.slug, name).toBe('instrument-services-with-opentelemetry-and-w3c-trace-context');
      }
      const question = { query: 'how do we stop quuxing in our API' };
      expect((await search(own.tools, question)).retrieval.mode).toBe('no_match');
      await changeSynonym(own.sql, { term: 'quuxing', expansions: ['insecure direct object reference'] });
      expect((await search(own.tools, question)).results[0]?.slug).toBe('authorize-access-to-each-object-on-every-request');
    } finally {
      await own.sql.close();
    }
  });

  it('a near miss stays no_match: it shares the technology or the rare word, not the question', async () => {
    for (const { name, tools } of modes) {
      for (const query of [
        'Kubernetes ingress TLS certificate renewal with cert-manager',
        'Redis eviction policy maxmemory-policy allkeys-lru',
        'how do I mock HttpClient in xUnit tests',
      ]) {
        const out = await search(tools, { query });
        expect(out.retrieval.mode, `${name}: ${query} → ${out.results.map((r) => r.slug).join(', ')}`).toBe('no_match');
      }
    }
  });
});

describe('SciFact', () => {
  it.skipIf(!existsSync(SCIFACT))('keyword BM25 keeps its measured quality on the first 100 queries', async () => {
    const report = await runEvaluation({ datasetDir: SCIFACT, queries: 100, log: quiet });
    expect(report.documents).toBe(5183);
    expect(report.modes.keyword!.ndcg_at_10).toBeGreaterThanOrEqual(KEYWORD_FLOOR);
    expect(report.modes.keyword!.recall_at_100).toBeGreaterThanOrEqual(RECALL_FLOOR);
  }, 300_000);

  it.skipIf(!existsSync(SCIFACT))('keyword BM25 from the copy in memory (the local server\'s way) ranks exactly as the store\'s statement', async () => {
    const store = await runEvaluation({ datasetDir: SCIFACT, queries: 100, log: quiet });
    const memory = await runEvaluation({ datasetDir: SCIFACT, queries: 100, log: quiet, keywordIndex: 'memory' });
    expect(memory.keyword_index).toBe('memory');
    const { latency_ms_p50: _a, latency_ms_p95: _b, ...fromMemory } = memory.modes.keyword!;
    const { latency_ms_p50: _c, latency_ms_p95: _d, ...fromStore } = store.modes.keyword!;
    expect(fromMemory).toEqual(fromStore);
    expect(memory.halves.test.keyword).toBe(store.halves.test.keyword);
  }, 600_000);
});

// Measured: see docs/quality.md; floors sit 0.01 under the measured values.
const KEYWORD_FLOOR = 0.725; // measured 0.735
const RECALL_FLOOR = 0.943; // measured 0.953

interface Floors {
  right: number;
  wrong: number;
  falseNoMatch: number;
  uncovered: number;
}

/** Test-half floors, 0.02 from what was measured (docs/quality.md, "Answer quality"): shares of right first and no_match on uncovered at least, wrong first and false no_match at most. */
const FLOORS: Record<'real' | 'written', Record<'hybrid' | 'keyword', Floors>> = {
  real: {
    hybrid: { right: 0.564, wrong: 0.035, falseNoMatch: 0.421, uncovered: 0.877 },
    keyword: { right: 0.559, wrong: 0.035, falseNoMatch: 0.426, uncovered: 0.89 },
  },
  written: {
    hybrid: { right: 0.908, wrong: 0.02, falseNoMatch: 0.092, uncovered: 0.835 },
    keyword: { right: 0.908, wrong: 0.034, falseNoMatch: 0.078, uncovered: 0.809 },
  },
};

function expectFloors(m: HonestyMetrics, floor: Floors, what: string): void {
  expect(m.right_first, `${what}: right record first`).toBeGreaterThanOrEqual(floor.right);
  expect(m.wrong_first, `${what}: wrong record first`).toBeLessThanOrEqual(floor.wrong);
  expect(m.false_no_match, `${what}: no_match although covered`).toBeLessThanOrEqual(floor.falseNoMatch);
  expect(m.no_match_uncovered, `${what}: no_match on uncovered`).toBeGreaterThanOrEqual(floor.uncovered);
}

/** The contract's result shape (chatctx docs §5): every field but summary and rationale is required. */
const contractResult = z.object({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  topic: z.string(),
  summary: z.string().optional(),
  recommendation: z.string(),
  rationale: z.string().optional(),
  applies_to: z.array(z.object({ kind: z.string(), name: z.string(), version_constraint: z.string().optional() })),
  conditions: z.array(z.string()),
  exceptions: z.array(z.string()),
  pitfalls: z.array(z.string()),
  verification_checks: z.array(z.string()),
  confidence: z.enum(['high', 'medium', 'low']),
  updated_at: z.iso.datetime({ offset: true }),
  sources: z.array(z.object({ title: z.string(), url: z.url(), publisher: z.string().optional(), evidence_excerpt: z.string().optional(), relation: z.string() })),
});
