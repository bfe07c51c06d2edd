/**
 * How records are asked for, as an owner manages it: `asked_as` through the quality
 * gates, a pending revision, its diff and history, what agents see of it; synonyms
 * added with the CLI; and a relevance profile fitted by `npm run eval:guidance --
 * --calibrate` against a running server's store, then read again when the server
 * starts. The CLI runs as a child process, agents are the official MCP client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { REPO_ROOT, preparedDataDir, runCli, startServer, type TestServer } from '../support/local-server.ts';
import { connectClient } from '../support/mcp-client.ts';
import { reviewedRecord } from '../support/records.ts';

let server: TestServer;
let client: Client;
let work: string;
const dataDir = () => server.dataDir;
const cli = (...args: string[]) => runCli(['--data-dir', dataDir(), ...args], { CHATCTX_REVIEWER: 'asked-as suite' });
const json = async (...args: string[]) => {
  const result = await cli('--json', ...args);
  return { code: result.code, body: JSON.parse(result.stdout) as any };
};
const file = async (name: string, value: unknown) => {
  const path = join(work, name);
  await writeFile(path, JSON.stringify(value, null, 2));
  return path;
};
const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent as any;

/** A record only this suite knows, asked for by an error text nobody else uses. */
const ERROR_TEXT = 'QX-7741: frobnicator ledger refused the batch';
const probe = (extra: Record<string, unknown> = {}) =>
  reviewedRecord('frobnicator-ledger-batches', {
    asked_as: [ERROR_TEXT, 'should frobnicator batches be retried', 'ledger refuses frobnicator writes'],
    ...extra,
  });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'chatctx-asked-'));
  server = await startServer({ CHATCTX_EMBEDDINGS: 'none' }, await preparedDataDir());
  client = await connectClient(server.url);
}, 300_000);

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await rm(work, { recursive: true, force: true });
  await rm(dataDir(), { recursive: true, force: true });
});

describe('asked_as', () => {
  it('is held to 3–10 phrasings by its gate, and a phrasing another record uses fails the duplicates gate', async () => {
    const starterPhrasing = 'FATAL: sorry, too many clients already';
    const folder = join(work, 'gated');
    await mkdir(folder);
    await writeFile(join(folder, 'few.json'), JSON.stringify(probe({ slug: 'too-few-phrasings', asked_as: ['only one way to ask', 'and a second one'] })));
    await writeFile(join(folder, 'taken.json'), JSON.stringify(probe({ slug: 'taken-phrasing', asked_as: [starterPhrasing, 'frobnicator pool drained', 'ledger pool empty'] })));
    const result = await cli('--json', 'records', 'gates', folder);
    expect(result.code).toBe(2);
    const reports = JSON.parse(result.stdout) as { slug: string; gates: { code: string; verdict: string; message: string }[] }[];
    const gate = (slug: string, code: string) => reports.find((r) => r.slug === slug)!.gates.find((g) => g.code === code)!;
    expect(gate('too-few-phrasings', 'asked_as')).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/2 phrasing\(s\); give 3 to 10/) });
    expect(gate('taken-phrasing', 'duplicates')).toMatchObject({
      verdict: 'fail',
      message: expect.stringContaining(`"${starterPhrasing}" is already the asked_as phrasing of record "bound-connection-pools-so-all-instances-fit-under-max-connections"`),
    });
  });

  it('finds its record by the error text an agent pastes, stack and all, and is shown only in full records', async () => {
    expect((await cli('records', 'import', await file('probe.json', probe()), '--approve')).code).toBe(0);
    const found = await call('search_knowledge', { query: `${ERROR_TEXT} in our Ruby on Rails app on EKS`, detail: 'standard' });
    expect(found.results[0]?.slug).toBe('frobnicator-ledger-batches');
    expect(found.results[0]).not.toHaveProperty('asked_as');
    expect(found.query_summary).toMatch(/Ruby on Rails/);
    const full = await call('get_guidance', { ids: ['frobnicator-ledger-batches'] });
    expect(full.results[0].asked_as).toEqual(probe().asked_as);
    const brief = await call('get_guidance', { ids: ['frobnicator-ledger-batches'], detail: 'brief' });
    expect(brief.results[0]).not.toHaveProperty('asked_as');
  });

  it('is part of the content: a change to it alone is a revision agents do not see until approved, with its diff and history', async () => {
    const changed = probe({ asked_as: [...(probe().asked_as as string[]), 'frobnicator ledger stuck after deploy'] });
    expect((await cli('records', 'import', await file('revised.json', changed))).code).toBe(0);
    const pending = await call('get_guidance', { ids: ['frobnicator-ledger-batches'] });
    expect(pending.results[0].asked_as).toHaveLength(3);
    const diff = (await json('records', 'diff', 'frobnicator-ledger-batches')).body;
    expect(diff.changes.map((c: any) => c.field)).toEqual(['asked_as']);
    expect(diff.changes[0].diff).toBe('+ frobnicator ledger stuck after deploy');
    expect((await cli('records', 'approve', 'frobnicator-ledger-batches')).code).toBe(0);
    const history = (await json('records', 'history', 'frobnicator-ledger-batches')).body;
    expect(history.versions.map((v: any) => v.content_version)).toEqual([1, 2]);
    const shown = (await json('records', 'show', 'frobnicator-ledger-batches', '--version', '1')).body;
    expect(shown.record.asked_as).toHaveLength(3);
    expect((await call('get_guidance', { ids: ['frobnicator-ledger-batches'] })).results[0].asked_as).toHaveLength(4);
  });
});

describe('synonyms', () => {
  it('an owner adds one with the CLI; policy list shows it; questions using the term find what its expansion names', async () => {
    const question = { query: 'zorblax sweeps keep failing' };
    expect((await call('search_knowledge', question)).retrieval.mode).toBe('no_match');
    const added = await cli('policy', 'add-synonym', 'zorblax sweeps', 'frobnicator ledger batches');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/synonym {2}zorblax sweeps → "frobnicator ledger batches"/);
    const listed = await json('policy', 'list');
    expect(listed.body.synonyms.added).toEqual([expect.objectContaining({ term: 'zorblax sweeps', expansions: ['frobnicator ledger batches'] })]);
    expect(listed.body.synonyms.defaults.idor).toEqual(expect.arrayContaining(['insecure direct object reference']));
    expect((await call('search_knowledge', question)).results[0]?.slug).toBe('frobnicator-ledger-batches');
    expect((await cli('policy', 'remove', 'synonym', 'zorblax sweeps')).code).toBe(0);
    expect((await call('search_knowledge', question)).retrieval.mode).toBe('no_match');
  });
});

describe('relevance profiles', () => {
  it('are fitted by eval:guidance --calibrate on the store of a running server, and read again when it starts', async () => {
    const before = (await json('relevance', 'list')).body;
    expect(before.active).toBe('none');
    expect(before.stored).toEqual([]);
    const real = join(work, 'real');
    const written = join(work, 'written');
    await mkdir(real);
    await mkdir(written);
    await writeFile(join(real, 'q.jsonl'), CALIBRATION_QUESTIONS.map((q) => JSON.stringify(q)).join('\n'));
    await writeFile(join(written, 'q.jsonl'), CALIBRATION_QUESTIONS.map((q) => JSON.stringify({ ...q, id: `w-${q.id}`, kind: undefined, record: undefined })).join('\n'));
    const run = await evalGuidance(['--calibrate', '--data-dir', dataDir(), '--real', real, '--written', written]);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/stored none in /);
    const after = (await json('relevance', 'list')).body;
    expect(after.stored.map((s: any) => s.profile)).toEqual(['none']);
    expect(after.profiles.none).toMatchObject({ calibrated: true, fitted: expect.objectContaining({ questions: expect.any(Number) }) });
    expect((await cli('relevance', 'list')).stdout).toMatch(/none {6}store/);

    await client.close();
    await server.stop();
    server = await startServer({ CHATCTX_EMBEDDINGS: 'none' }, dataDir());
    client = await connectClient(server.url);
    const line = server.output().split('\n').find((l) => l.includes('"event":"relevance_profile"'))!;
    expect(JSON.parse(line)).toMatchObject({ profile: 'none', source: 'store', calibrated: true, fitted_at: expect.any(String) });

    expect((await cli('relevance', 'remove', 'none')).stdout).toMatch(/No calibrated profile in this store/);
  }, 240_000);
});

/** A few covered and uncovered questions about the starter corpus, enough to fit a profile on. */
const CALIBRATION_QUESTIONS = [
  ['c1', 'covered', 'password hashing algorithm for user accounts', 'hash-passwords-with-argon2id-or-bcrypt'],
  ['c2', 'covered', 'deep pagination with OFFSET is slow', 'use-keyset-pagination-instead-of-large-offset'],
  ['c3', 'covered', 'retry failed HTTP calls with exponential backoff and jitter', 'retry-with-capped-exponential-backoff-jitter-and-retry-after'],
  ['c4', 'covered', 'React list rows keep the wrong state after reordering', 'use-stable-keys-for-dynamic-react-lists'],
  ['c5', 'covered', 'SQL injection in a query built with string concatenation', 'use-parameterized-queries-to-prevent-sql-injection'],
  ['c6', 'covered', 'icon-only button has no accessible name for screen readers', 'give-icon-only-buttons-an-accessible-name'],
  ['u1', 'off_topic', 'best sourdough hydration for rye loaves', undefined],
  ['u2', 'uncovered', 'how do I center a div with flexbox', undefined],
  ['u3', 'near_miss', 'Kubernetes ingress TLS certificate renewal with cert-manager', 'use-shallow-liveness-probes-and-dependency-aware-readiness-probes'],
  ['u4', 'uncovered', 'choosing a colour palette for a marketing site', undefined],
].map(([id, kind, query, record]) => ({
  id,
  kind,
  ...(record ? { record } : {}),
  query,
  relevant: kind === 'covered' ? { [record!]: 2 } : {},
}));

/** `npm run eval:guidance -- …` as an owner runs it. */
function evalGuidance(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/eval/eval-guidance.ts', ...args], { cwd: REPO_ROOT, env: process.env });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}
