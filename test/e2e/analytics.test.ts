/**
 * `chatctx analytics` after a scripted session: the real server, the official MCP
 * client running a known set of searches and feedback, then the CLI's report with
 * exact counts (directly on the stopped store, and through a running server's
 * admin endpoint); and the retention of search events, applied by the command and
 * by the server at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { preparedDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { SETTINGS } from '../../lambdas/config/settings.ts';
import type { AnalyticsResult } from '../../lambdas/admin/admin-operations.ts';

const KEYS = 'use-stable-keys-for-dynamic-react-lists';
const PASSWORDS = 'hash-passwords-with-argon2id-or-bcrypt';
const SERVER_ENV = { [SETTINGS.embeddings.env]: 'none' };

interface Answer {
  results: { id: string; slug: string }[];
  retrieval: { mode: string; degraded: boolean };
}

let dataDir: string;
let answers: Answer[] = [];

const serve = (env: Record<string, string> = {}) => startServer({ ...SERVER_ENV, ...env }, dataDir);

async function analytics(days: number, env: Record<string, string> = {}): Promise<AnalyticsResult> {
  const run = await runCli(['--json', '--data-dir', dataDir, 'analytics', '--days', String(days)], { ...SERVER_ENV, ...env });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return JSON.parse(run.stdout) as AnalyticsResult;
}

/** Writes search events `daysAgo` days old straight into the stopped server's store. */
async function oldEvents(count: number, daysAgo: number): Promise<void> {
  const sql = await PgliteSql.open(join(dataDir, 'pgdata'));
  try {
    for (let i = 0; i < count; i++) {
      await sql.query(
        `INSERT INTO search_events (query_hash, technologies, mode, result_count, degraded, created_at)
         VALUES ('old', ARRAY['Cobol'], 'no_match', 0, false, now() - make_interval(days => $1::int))`,
        [daysAgo],
      );
    }
  } finally {
    await sql.close();
  }
}

async function runScript(server: TestServer): Promise<void> {
  const client = await connectClient(server.url);
  const search = async (args: Record<string, unknown>) => {
    const result = await client.callTool({ name: 'search_knowledge', arguments: args });
    answers.push(result.structuredContent as Answer);
    return result.structuredContent as Answer;
  };
  await search({ query: 'React list rows keep the wrong state after reordering', technologies: ['React'] });
  const passwords = await search({ query: 'hash passwords with argon2id or bcrypt' });
  await search({ query: 'keyset pagination instead of a large offset' });
  await search({ query: 'GenServer supervision trees for umbrella apps', technologies: ['Elixir'] });
  await search({ query: 'Ecto changeset cast_assoc with nested GenServer state', technologies: ['Elixir'], topic: 'data' });
  await search({ query: 'protect cookie sessions from CSRF with tokens', topic: 'security' });
  const feedback = (category: string, record: string) =>
    client.callTool({ name: 'submit_feedback', arguments: { category, record, source: 'search_knowledge' } });
  await feedback('helpful', KEYS);
  await feedback('helpful', KEYS);
  await feedback('outdated', passwords.results.find((r) => r.slug === PASSWORDS)!.id);
  await client.close();
}

beforeAll(async () => {
  dataDir = await preparedDataDir();
  const server = await serve();
  try {
    await runScript(server);
  } finally {
    // Search events are written in batches; stopping the server writes what is left.
    await server.stop();
  }
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const none = { helpful: 0, not_helpful: 0, incorrect: 0, outdated: 0, missing: 0, other: 0 };

function expectScriptedReport(report: AnalyticsResult): void {
  expect(report.days).toBe(7);
  expect(report.searches).toBe(6);
  expect(report.modes).toEqual({
    hybrid: { count: 0, share: 0 },
    keyword_fallback: { count: 4, share: 0.667 },
    no_match: { count: 2, share: 0.333 },
  });
  // No embedding provider: every answer comes from keyword search alone, and says so.
  expect(report.degraded_rate).toBe(1);
  expect(report.per_day).toHaveLength(7);
  expect(report.per_day.at(-1)!.day).toBe(new Date().toISOString().slice(0, 10));
  expect(report.per_day.reduce((n, d) => n + d.searches, 0)).toBe(6);
  expect(report.coverage_gaps).toEqual({
    technologies: [{ name: 'Elixir', no_match: 2, searches: 2 }],
    topics: [{ name: 'data', no_match: 1, searches: 1 }],
  });
  // The records most shown: what the scripted answers returned, counted per search through the server's buffered writer.
  const shown = new Map<string, number>();
  for (const answer of answers) for (const r of answer.results) shown.set(r.slug, (shown.get(r.slug) ?? 0) + 1);
  const most = [...shown].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10);
  expect(report.top_records).toEqual(most.map(([slug, n]) => ({ slug, title: expect.any(String), shown: n })));
  expect(report.top_records.length).toBeGreaterThan(0);
  expect(report.feedback.total).toBe(3);
  expect(report.feedback.by_category).toEqual({ ...none, helpful: 2, outdated: 1 });
  expect(report.feedback.by_record).toEqual([
    { record: KEYS, title: expect.any(String), counts: { ...none, helpful: 2 }, total: 2 },
    { record: PASSWORDS, title: expect.any(String), counts: { ...none, outdated: 1 }, total: 1 },
  ]);
}

describe('chatctx analytics after a scripted session', () => {
  it('the session went as scripted: three matches, two Elixir questions without one, one topic-filtered match', () => {
    expect(answers.map((a) => a.retrieval.mode)).toEqual(['keyword_fallback', 'keyword_fallback', 'keyword_fallback', 'no_match', 'no_match', 'keyword_fallback']);
    expect(answers[0]!.results.map((r) => r.slug)).toContain(KEYS);
  });

  it('reports exact counts from the stopped store, and purges nothing young', async () => {
    const report = await analytics(7);
    expectScriptedReport(report);
    expect(report.purged).toBe(0);
    expect(report.retention_days).toBe(90);
    expect(JSON.stringify(report)).not.toMatch(/[0-9a-f]{64}/);
  });

  it('reports the same through a running server, in a compact table for people', async () => {
    const server = await serve();
    try {
      expectScriptedReport(await analytics(7));
      const human = await runCli(['--data-dir', dataDir, 'analytics', '--days', '7']);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/searches\s+6\n/);
      expect(human.stdout).toMatch(/keyword_fallback\s+4\s+66\.7%/);
      expect(human.stdout).toMatch(/no_match\s+2\s+33\.3%/);
      expect(human.stdout).toMatch(/degraded rate\s+100%/);
      expect(human.stdout).toMatch(/technologies\s+Elixir 2\/2/);
      expect(human.stdout).toContain('Records most shown (searches that returned each):');
      expect(human.stdout).toMatch(new RegExp(`^ +\\d+  ${KEYS}  `, 'm'));
      expect(human.stdout).toContain('Feedback: 3 (helpful 2, outdated 1)');
      expect(human.stdout).toContain(`${KEYS}  2  (helpful 2)`);
      expect(human.stdout).not.toContain('Purged');
    } finally {
      await server.stop();
    }
  });

  it('deletes search events past the retention, by the setting, and says how many', async () => {
    await oldEvents(3, 200);
    await oldEvents(2, 30);
    const first = await analytics(7);
    expect(first.purged).toBe(3);
    expect(first.retention_days).toBe(90);
    expect(first.searches).toBe(6);
    const short = await runCli(['--data-dir', dataDir, 'analytics', '--days', '7'], { ...SERVER_ENV, [SETTINGS.searchEventRetentionDays.env]: '20' });
    expect(short.code, short.stderr).toBe(0);
    expect(short.stdout).toContain('Purged 2 search event(s) older than 20 days.');
    expect((await analytics(60)).searches).toBe(6);
  });

  it('the server deletes old search events when it starts', async () => {
    await oldEvents(2, 200);
    const server = await serve();
    try {
      await expect.poll(() => server.output(), { timeout: 120_000 }).toMatch(/"event":"search_events_purged".*"purged":2/);
    } finally {
      await server.stop();
    }
    expect((await analytics(7)).purged).toBe(0);
    expect((await analytics(3650)).searches).toBe(6);
  });
});
