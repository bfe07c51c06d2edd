/**
 * The owner console's commands as a user runs them from the CLI (a child process
 * on the data directory of a running server, embeddings off, so every command goes
 * through the server's admin endpoint instead of opening the store each time): the
 * review queue, rejecting with a reason (and the history that shows it), an
 * explained search over the starter corpus the server loaded, marking feedback
 * reviewed, and the records most shown in the analytics. The direct path (no
 * server) runs the same admin operations; test/e2e/cli.test.ts covers it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, startPreparedServer, type TestServer } from '../support/local-server.ts';
import { reviewedRecord } from '../support/records.ts';

let server: TestServer;
let work: string;
const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args], { CHATCTX_EMBEDDINGS: 'none', CHATCTX_REVIEWER: 'console suite' });
const file = async (name: string, value: unknown) => {
  const path = join(work, name);
  await writeFile(path, JSON.stringify(value, null, 2));
  return path;
};

beforeAll(async () => {
  server = await startPreparedServer({ CHATCTX_EMBEDDINGS: 'none' });
  work = await mkdtemp(join(tmpdir(), 'chatctx-console-'));
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await rm(work, { recursive: true, force: true });
});

describe('records queue and records reject', () => {
  it('lists what waits, rejects it with a reason, and shows the rejection in the history', async () => {
    expect((await cli('records', 'import', await file('served.json', reviewedRecord('cli-served')), '--approve')).code).toBe(0);
    expect((await cli('records', 'import', await file('candidate.json', reviewedRecord('cli-candidate')))).code).toBe(0);
    const revised = { ...reviewedRecord('cli-served'), title: 'Guard the served jobs with a deadline, revised' };
    expect((await cli('records', 'import', await file('revised.json', revised))).code).toBe(0);

    const queue = await cli('records', 'queue');
    expect(queue.code).toBe(0);
    const lines = queue.stdout.trim().split('\n').filter((l) => !l.startsWith(' '));
    expect(lines).toEqual([expect.stringMatching(/ candidate +cli-candidate +pass /), expect.stringMatching(/ revision +cli-served +pass +Guard the served jobs with a deadline, revised$/)]);
    const json = JSON.parse((await cli('--json', 'records', 'queue')).stdout) as { slug: string; kind: string; gates: { verdict: string } }[];
    expect(json.map((q) => [q.slug, q.kind, q.gates.verdict])).toEqual([
      ['cli-candidate', 'candidate', 'pass'],
      ['cli-served', 'revision', 'pass'],
    ]);

    const noReason = await cli('records', 'reject', 'cli-candidate');
    expect(noReason.code).not.toBe(0);
    expect(noReason.stderr).toMatch(/--reason/);
    const short = await cli('records', 'reject', 'cli-candidate', '--reason', 'meh');
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 10 characters/);

    const rejected = await cli('records', 'reject', 'cli-candidate', 'cli-served', '--reason', 'not what the source says', '--reviewer', 'an owner');
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain('2 rejected.');
    expect(rejected.stdout).toMatch(/cli-served +revision dropped; the approved version keeps serving/);
    expect((await cli('records', 'queue')).stdout).toContain('Nothing waits for review.');
    const history = await cli('records', 'history', 'cli-candidate');
    expect(history.stdout).toMatch(/^cli-candidate +rejected$/m);
    expect(history.stdout).toMatch(/candidate rejected .* by an owner: not what the source says/);
    expect((await cli('records', 'history', 'cli-served')).stdout).toMatch(/revision rejected .* by an owner: not what the source says/);

    const again = await cli('records', 'reject', 'cli-served', '--reason', 'nothing waits for this one now');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/cli-served is approved and has no revision waiting/);
  }, 300_000);
});

describe('records search', () => {
  it('prints the candidates shown and the ones cut, with the reason, and counts no search', async () => {
    const result = await cli('records', 'search', 'password hashing algorithm for user accounts', '--technologies', 'node.js');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Shown:\n {2}hash-passwords-with-argon2id-or-bcrypt /m);
    expect(result.stdout).toMatch(/^Cut:$/m);
    expect(result.stdout).toMatch(/below the relevance threshold/);
    const json = JSON.parse((await cli('--json', 'records', 'search', 'password hashing algorithm for user accounts', '--max-results', '1')).stdout);
    expect(json.result.results).toHaveLength(1);
    expect(json.explain.candidates[0]).toMatchObject({ slug: 'hash-passwords-with-argon2id-or-bcrypt', outcome: 'shown' });
    // The server writes search events at most a second after a search: wait past that, so a counted owner search would show.
    await sleep(1500);
    const analytics = await cli('analytics');
    expect(analytics.stdout).toMatch(/^ {2}searches {10}0$/m);
    expect(analytics.stdout).toContain('Records most shown: none');
  }, 300_000);

  it('refuses arguments search_knowledge would refuse', async () => {
    const bad = await cli('records', 'search', 'x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/query/);
  }, 120_000);
});

describe('feedback review', () => {
  it('refuses an unknown id and contradictory filters, and lists nothing unreviewed in a new store', async () => {
    const unknown = await cli('feedback', 'review', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No feedback has that id/);
    const both = await cli('feedback', 'list', '--reviewed', '--unreviewed');
    expect(both.code).toBe(1);
    expect((await cli('feedback', 'list', '--unreviewed')).stdout.trim()).toBe('No feedback.');
  }, 120_000);
});
