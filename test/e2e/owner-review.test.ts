/**
 * Owner review as an owner does it: the CLI against a running server (commands go
 * through its admin endpoint) and an agent's view through the official MCP client.
 * Broken records are caught by their quality gate, overrides are stored and shown,
 * a revision of an approved record stays invisible to agents until it is approved,
 * history and diff show both versions, and a superseded record names its successor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { REPO_ROOT, runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import { reviewedRecord } from '../support/records.ts';

let server: TestServer;
let client: Client;
let work: string;
const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args], { CHATCTX_REVIEWER: 'review suite' });
const json = async (...args: string[]) => {
  const result = await cli('--json', ...args);
  return { code: result.code, body: JSON.parse(result.stdout) as any };
};
const starter = async (slug: string) => JSON.parse(await readFile(join(REPO_ROOT, 'guidance', `${slug}.json`), 'utf8')) as Record<string, any>;
const file = async (name: string, value: unknown) => {
  const path = join(work, name);
  await writeFile(path, JSON.stringify(value, null, 2));
  return path;
};
const guidance = async (ids: string[]) => (await client.callTool({ name: 'get_guidance', arguments: { ids } })).structuredContent as any;
const monthsAgo = (months: number) => new Date(Date.now() - months * 30.5 * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'chatctx-review-'));
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
  client = await connectClient(server.url);
}, 300_000);

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await rm(work, { recursive: true, force: true });
});

/** The broken records an owner could write, each with the gate that must catch it. */
async function brokenRecords() {
  const keyset = await starter('use-keyset-pagination-instead-of-large-offset');
  const base = (slug: string) => reviewedRecord(slug);
  const source = base('x').sources as any[];
  return [
    { name: 'missing-evidence', gate: 'evidence', verdict: 'fail', record: { ...base('missing-evidence'), sources: [{ ...source[0], evidence_excerpt: undefined }] } },
    { name: 'blog-only', gate: 'source_authority', verdict: 'fail', record: { ...base('blog-only'), sources: [{ ...source[0], url: 'https://my-dev-notes.example.net/2024/timeouts' }] } },
    { name: 'reviewed-2009', gate: 'freshness', verdict: 'fail', record: { ...base('reviewed-2009'), reviewed_at: '2009-06-01' } },
    { name: 'bad-range', gate: 'version_scope', verdict: 'fail', record: { ...base('bad-range'), applies_to: [{ kind: 'database', name: 'PostgreSQL', version_constraint: 'not a semver range!!' }] } },
    { name: 'keyset-again', gate: 'duplicates', verdict: 'fail', record: { ...keyset, slug: 'keyset-again' } },
    {
      name: 'offset-instead',
      gate: 'conflicts',
      verdict: 'warn',
      record: {
        ...keyset,
        slug: 'offset-instead',
        title: 'Page through result lists with LIMIT and OFFSET',
        recommendation: 'Avoid keyset pagination: use LIMIT and OFFSET for every page, which is simpler and lets users jump to any page number.',
        asked_as: ['jump to page 40 of the results', 'page numbers in a result list', 'LIMIT and OFFSET paging'],
      },
    },
    { name: 'long-excerpt', gate: 'license', verdict: 'fail', record: { ...base('long-excerpt'), sources: [{ ...source[0], evidence_excerpt: Array(70).fill('timers').join(' ') }] } },
    { name: 'no-license', gate: 'license', verdict: 'warn', record: { ...base('no-license'), license: undefined } },
  ] as const;
}

describe('the starter corpus', () => {
  it('passes every gate without an override, judged against all the others (before anything else is approved)', async () => {
    const result = await cli('--json', 'records', 'gates', join(REPO_ROOT, 'guidance'));
    expect(result.code).toBe(0);
    const reports = JSON.parse(result.stdout) as { slug: string; gates: { code: string; verdict: string }[] }[];
    const files = (await readdir(join(REPO_ROOT, 'guidance'))).filter((f) => f.endsWith('.json'));
    expect(reports).toHaveLength(files.length);
    // Every source carries its verification (verified_at, verified_from), so not even `unverified` warns.
    for (const report of reports) expect(report.gates.filter((g) => g.verdict !== 'pass'), report.slug).toEqual([]);
    // …and the server approved them at first start with their gate reports.
    const shown = (await json('records', 'show', 'use-stable-keys-for-dynamic-react-lists')).body;
    expect(shown.approval).toMatchObject({ approved_by: 'starter corpus', verdict: 'pass' });
  });
});

describe('the quality gates, through the CLI', () => {
  it('reports each broken record under its gate, with a message an owner can act on', async () => {
    const cases = await brokenRecords();
    const folder = join(work, 'broken');
    await mkdir(folder);
    for (const c of cases) await writeFile(join(folder, `${c.name}.json`), JSON.stringify(c.record));
    const result = await cli('--json', 'records', 'gates', folder);
    expect(result.code).toBe(2); // some gate failed
    const reports = JSON.parse(result.stdout) as { slug: string; verdict: string; gates: { code: string; verdict: string; message: string }[] }[];
    for (const c of cases) {
      const report = reports.find((r) => r.slug === c.name)!;
      const flagged = report.gates.filter((g) => g.verdict !== 'pass');
      // Caught by its own gate, and only by it.
      expect(flagged.map((g) => [g.code, g.verdict]), c.name).toEqual([[c.gate, c.verdict]]);
    }
    const message = (name: string) => reports.find((r) => r.slug === name)!.gates.find((g) => g.verdict !== 'pass')!.message;
    expect(message('missing-evidence')).toMatch(/no evidence_excerpt: quote the passage/);
    expect(message('blog-only')).toMatch(/my-dev-notes\.example\.net, which the source policy does not know.*chatctx policy trust/);
    expect(message('reviewed-2009')).toMatch(/Last reviewed 2009-06-01, \d+ months ago \(the limit is 36\)/);
    expect(message('bad-range')).toMatch(/"not a semver range!!" is not a semver range/);
    expect(message('keyset-again')).toMatch(/duplicate of approved record "use-keyset-pagination-instead-of-large-offset".*"supersedes"/);
    expect(message('offset-instead')).toMatch(/May contradict approved record "use-keyset-pagination-instead-of-large-offset"/);
    expect(message('long-excerpt')).toMatch(/quotes 70 words; keep evidence to a short quote of at most 50 words/);
    expect(message('no-license')).toMatch(/states no license; the store's default CC-BY-4\.0 will apply/);
  });

  it('refuses to approve on a failed gate and imports nothing; a warning is shown and the record goes out', async () => {
    const cases = await brokenRecords();
    for (const c of cases) {
      const result = await cli('--json', 'records', 'import', await file(`${c.name}.json`, c.record), '--approve');
      const out = JSON.parse(result.stdout);
      if (c.verdict === 'fail') {
        expect(result.code, c.name).toBe(1);
        expect(out.error.message).toMatch(/quality gate problem\(s\); nothing was approved/);
        expect(out.error.details.problems).toEqual([expect.objectContaining({ where: c.name, problem: expect.stringMatching(new RegExp(`^${c.gate}: `)) })]);
      } else {
        expect(result.code, c.name).toBe(0);
        expect(out.gates.find((g: any) => g.slug === c.name).gates.find((g: any) => g.code === c.gate).verdict).toBe('warn');
      }
    }
    const listed = (await json('records', 'list')).body as { slug: string; status: string }[];
    const published = listed.filter((r) => cases.some((c) => c.name === r.slug)).map((r) => r.slug).sort();
    expect(published).toEqual(['no-license', 'offset-instead']);
    // With an official source beside it, the unknown host only warns, and the human import output names the warning.
    const official = reviewedRecord('x').sources as any[];
    const again = await cli('records', 'import', await file('blog-again.json', { ...reviewedRecord('blog-again'), sources: [...official, ...cases[1].record.sources] }), '--approve');
    expect(again.stdout).toMatch(/WARN {2}source_authority: .*my-dev-notes\.example\.net/);
  });

  it('publishes over a failed gate only with a written reason, stores it with the approval and shows it', async () => {
    const old = await file('old.json', { ...reviewedRecord('old-but-still-true'), reviewed_at: '2009-06-01' });
    const short = await cli('records', 'import', old, '--approve', '--override', 'freshness=ok');
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/an override needs a reason of at least 10 characters/);
    const needless = await cli('records', 'import', old, '--approve', '--override', 'freshness=checked again today', '--override', 'evidence=nothing wrong here at all');
    expect(needless.code).toBe(1);
    expect(needless.stderr).toMatch(/--override evidence: no record's evidence gate failed or warned/);

    const reason = 'Checked against the current Node.js docs; the timers API has not changed.';
    expect((await cli('records', 'import', old, '--approve', '--reviewer', 'ops lead', '--override', `freshness=${reason}`)).code).toBe(0);
    const shown = (await json('records', 'show', 'old-but-still-true')).body;
    expect(shown.approval).toMatchObject({ approved_by: 'ops lead', verdict: 'fail', overrides: [{ gate: 'freshness', reason }] });
    const human = await cli('records', 'show', 'old-but-still-true');
    expect(human.stdout).toMatch(/approved by ops lead at .*gates: fail/);
    expect(human.stdout).toContain(`override freshness: ${reason}`);
    // Due for review, and says so.
    const stale = (await json('records', 'stale')).body as { slug: string; verdict: string }[];
    expect(stale).toContainEqual(expect.objectContaining({ slug: 'old-but-still-true', verdict: 'fail' }));

    // Re-reviewed: the same text with today's reviewed_at. No new version, no longer due.
    const today = new Date().toISOString().slice(0, 10);
    const rereviewed = await file('rereviewed.json', { ...reviewedRecord('old-but-still-true'), reviewed_at: today });
    expect((await json('records', 'import', rereviewed, '--approve')).body).toMatchObject({ unchanged: 1 });
    expect(((await json('records', 'stale')).body as { slug: string }[]).map((r) => r.slug)).not.toContain('old-but-still-true');
    expect((await json('records', 'show', 'old-but-still-true')).body).toMatchObject({ content_version: 1, reviewed_at: today });
  });

  it('lets the owner extend the policy: a blocked host fails, an added technology is known', async () => {
    const gleam = await file('gleam.json', { ...reviewedRecord('supervise-gleam-workers'), applies_to: [{ kind: 'language', name: 'Gleam' }] });
    const gates = async () => ((await json('records', 'gates', gleam)).body as any[])[0].gates.filter((g: any) => g.verdict !== 'pass');
    expect(await gates()).toEqual([expect.objectContaining({ code: 'version_scope', verdict: 'fail', message: expect.stringMatching(/Gleam is not in the technology vocabulary/) })]);
    expect((await cli('policy', 'add-technology', 'Gleam')).code).toBe(0);
    expect((await cli('policy', 'block', 'nodejs.org', '--reason', 'testing a block')).code).toBe(0);
    expect(await gates()).toEqual([expect.objectContaining({ code: 'source_authority', verdict: 'fail', message: expect.stringMatching(/nodejs\.org, which the source policy blocks \(testing a block\)/) })]);
    expect((await cli('policy', 'remove', 'blocked', 'nodejs.org')).code).toBe(0);
    expect(await gates()).toEqual([]);
    expect((await cli('policy', 'list')).stdout).toMatch(/technology {2}Gleam/);
  });

});

describe('the record lifecycle', () => {
  const slug = 'use-stable-keys-for-dynamic-react-lists';

  it('keeps serving the approved text while a revision waits, then serves the revision once approved', async () => {
    const before = (await guidance([slug])).results[0];
    expect(before.content_version).toBe(1);
    const revised = { ...(await starter(slug)), recommendation: 'Give every element rendered from an array a key taken from the item itself, never its index.' };
    const staged = await json('records', 'import', await file('revised.json', revised));
    expect(staged.body).toMatchObject({ staged: 1, updated: 0 });

    // Agents see exactly what they saw before.
    expect((await guidance([slug])).results[0]).toEqual(before);
    const diff = await cli('records', 'diff', slug);
    expect(diff.stdout).toMatch(/1 → pending, 1 field\(s\) changed/);
    expect(diff.stdout).toMatch(/\[-Key-\]\{\+Give\+\}/);

    const approved = await json('records', 'approve', slug, '--reviewer', 'second reviewer');
    expect(approved.body.changed).toBe(1);
    const after = (await guidance([slug])).results[0];
    expect(after).toMatchObject({ content_version: 2, recommendation: revised.recommendation });
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));

    const history = (await json('records', 'history', slug)).body;
    expect(history.versions.map((v: any) => [v.content_version, v.approved_by])).toEqual([
      [1, 'starter corpus'],
      [2, 'second reviewer'],
    ]);
    expect(history.pending_revision).toBeNull();
    const versions = (await json('records', 'diff', slug, '1', '2')).body;
    expect(versions.changes.map((c: any) => c.field)).toEqual(['recommendation']);
    expect((await json('records', 'show', slug, '--version', '1')).body.record.recommendation).toBe(before.recommendation);
  });

  it('takes updated_at from the record file when it gives one, and does not bump it on deprecation', async () => {
    const declared = '2026-11-20T10:00:00.000Z';
    const record = { ...reviewedRecord('declared-update-time'), updated_at: declared };
    expect((await cli('records', 'import', await file('declared.json', record))).code).toBe(0);
    expect((await cli('records', 'approve', 'declared-update-time')).code).toBe(0);
    expect(new Date((await guidance(['declared-update-time'])).results[0].updated_at).toISOString()).toBe(declared);

    const successor = reviewedRecord('declared-update-time-v2');
    expect((await cli('records', 'import', await file('successor.json', successor), '--approve')).code).toBe(0);
    const shownBefore = (await json('records', 'show', 'declared-update-time')).body;
    expect((await cli('records', 'deprecate', 'declared-update-time', '--superseded-by', 'declared-update-time-v2', '--reason', 'merged into v2')).code).toBe(0);
    const shownAfter = (await json('records', 'show', 'declared-update-time')).body;
    expect(shownAfter.updated_at).toBe(shownBefore.updated_at);
    expect(shownAfter.deprecation).toMatchObject({ reason: 'merged into v2', superseded_by: 'declared-update-time-v2' });

    // The agent is told where the guidance went, in the contract's shape plus one optional field.
    const answer = await guidance(['declared-update-time', 'no-such-record']);
    expect(answer).toEqual({ results: [], missing: ['declared-update-time', 'no-such-record'], superseded_by: { 'declared-update-time': 'declared-update-time-v2' } });
  });

  it('lets a record declare what it supersedes: the duplicate gate allows it and approval retires the old one', async () => {
    const old = await starter('use-keyset-pagination-instead-of-large-offset');
    const replacement = { ...old, slug: 'keyset-pagination-for-deep-pages', supersedes: ['use-keyset-pagination-instead-of-large-offset'] };
    const imported = await json('records', 'import', await file('replacement.json', replacement), '--approve');
    expect(imported.code).toBe(0);
    const answer = await guidance(['use-keyset-pagination-instead-of-large-offset']);
    expect(answer.superseded_by).toEqual({ 'use-keyset-pagination-instead-of-large-offset': 'keyset-pagination-for-deep-pages' });
    const search = (await client.callTool({ name: 'search_knowledge', arguments: { query: 'slow pagination with large OFFSET' } })).structuredContent as any;
    expect(search.results.map((r: any) => r.slug)).toContain('keyset-pagination-for-deep-pages');
    expect(search.results.map((r: any) => r.slug)).not.toContain('use-keyset-pagination-instead-of-large-offset');
  });
});
