/**
 * The gates' rules and thresholds, on records built in the test: where each
 * verdict flips, and what the owner is told.
 */
import { describe, expect, it } from 'vitest';
import {
  CONFLICT_SIMILARITY,
  DUPLICATE_SIMILARITY,
  recommendsAgainst,
  runGates,
  type GateCode,
  type Neighbour,
  type ReviewRules,
} from '../../lambdas/records/quality-gates.ts';
import { recordFileSchema, type RecordFile } from '../../lambdas/records/record-schema.ts';
import { REPO_POLICY, judgeSource, mergePolicy } from '../../lambdas/records/source-policy.ts';
import type { PhrasingClash } from '../../lambdas/records/phrasings.ts';
import { reviewedRecord } from '../support/records.ts';
import { checkKey, type StoredCheck } from '../../lambdas/records/source-verification.ts';

const RULES: ReviewRules = { freshnessWarnMonths: 18, freshnessFailMonths: 36, excerptMaxWords: 50, defaultLicense: 'CC-BY-4.0', evidenceCheckDays: 30 };
const NOW = new Date('2026-12-01T12:00:00Z');
const record = (extra: Record<string, unknown> = {}): RecordFile => recordFileSchema.parse(reviewedRecord('gate-probe', { reviewed_at: '2026-11-01', ...extra }));
/** Checks that found every excerpt of `r` on its page, on `at`. */
const verified = (r: RecordFile, at = '2026-11-20T00:00:00Z'): Map<string, StoredCheck> =>
  new Map(r.sources.map((s) => [checkKey(s.url, s.evidence_excerpt!), { status: 'verified' as const, how: 'fetched' as const, detail: null, closest: null, similarity: null, checkedAt: at }]));
const gate = (code: GateCode, r: RecordFile, neighbours: Neighbour[] = [], rules = RULES, clashes: PhrasingClash[] = [], checks = verified(r)) =>
  runGates({ record: r, rules, policy: REPO_POLICY, neighbours, clashes, checks, now: NOW }).gates.find((g) => g.code === code)!;
const neighbour = (similarity: number, extra: Partial<Neighbour> = {}): Neighbour => ({
  id: '00000000-0000-4000-8000-000000000001',
  slug: 'approved-one',
  title: 'Approved one',
  topic: 'reliability',
  technologies: ['Node.js'],
  recommendation: 'Put a deadline on every outbound call.',
  similarity,
  ...extra,
});

describe('quality gates', () => {
  it('passes a well-formed record on every gate', () => {
    const report = runGates({ record: record(), rules: RULES, policy: REPO_POLICY, neighbours: [], checks: verified(record()), now: NOW });
    expect(report.verdict).toBe('pass');
    expect(report.gates.map((g) => g.code)).toEqual(['evidence', 'source_authority', 'freshness', 'license', 'version_scope', 'duplicates', 'conflicts', 'asked_as']);
  });

  it('asked_as: 3 to 10 phrasings of 3 to 200 characters, none repeated; none at all only warns', () => {
    const three = ['pool hangs under load', 'should the pool have a maximum', 'FATAL: sorry, too many clients already'];
    expect(gate('asked_as', record({ asked_as: three })).verdict).toBe('pass');
    expect(gate('asked_as', record({ asked_as: undefined }))).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/No asked_as/) });
    expect(gate('asked_as', record({ asked_as: three.slice(0, 2) }))).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/2 phrasing\(s\); give 3 to 10/) });
    const eleven = Array.from({ length: 11 }, (_, i) => `phrasing number ${i}`);
    expect(gate('asked_as', record({ asked_as: eleven })).verdict).toBe('fail');
    expect(gate('asked_as', record({ asked_as: [...three, 'ab'] })).message).toMatch(/asked_as 4 has 2 characters/);
    expect(gate('asked_as', record({ asked_as: [...three, 'x'.repeat(201)] })).message).toMatch(/asked_as 4 has 201 characters/);
    expect(gate('asked_as', record({ asked_as: [...three, 'Pool hangs, under load!'] })).message).toMatch(/asked_as 4 repeats an earlier phrasing/);
  });

  it("duplicates: a phrasing that is another record's title or asked_as fails, naming that record", () => {
    const clash: PhrasingClash = { phrase: 'pool hangs under load', slug: 'bound-connection-pools', field: 'asked_as' };
    expect(gate('duplicates', record(), [], RULES, [clash])).toMatchObject({
      verdict: 'fail',
      message: expect.stringMatching(/"pool hangs under load" is already the asked_as phrasing of record "bound-connection-pools"/),
    });
    expect(gate('duplicates', record(), [], RULES, [{ ...clash, field: 'title' }]).message).toMatch(/already the title of record/);
  });

  it('evidence: an excerpt must be there and long enough, and some source must support', () => {
    const source = (record().sources[0]!);
    expect(gate('evidence', record({ sources: [{ ...source, evidence_excerpt: 'Too short to check.' }] }))).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/quotes 4 word\(s\); an excerpt needs at least 8/) });
    expect(gate('evidence', record({ sources: [{ ...source, relation: 'context' }] }))).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/No source has relation "supports"/) });
  });

  it('evidence: an excerpt a recent check found missing fails with the closest passage; never checked, an older miss or an unreadable page warn', () => {
    // Without the file's own verification claim, so only stored checks count.
    const r = record({ sources: record().sources.map(({ verified_at: _at, verified_from: _from, ...s }) => s) });
    const key = checkKey(r.sources[0]!.url, r.sources[0]!.evidence_excerpt!);
    const at = (status: StoredCheck['status'], checkedAt: string, extra: Partial<StoredCheck> = {}) =>
      new Map([[key, { status, how: 'fetched' as const, detail: null, closest: null, similarity: null, checkedAt, ...extra }]]);
    const drifted = gate('evidence', r, [], RULES, [], at('drifted', '2026-11-25T10:00:00Z', { closest: 'a passage that reads differently now', similarity: 0.62 }));
    expect(drifted).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/not on the page when checked on 2026-11-25\. The closest passage \(62% alike\) reads: "a passage that reads differently now"/) });
    expect(gate('evidence', r, [], RULES, [], at('drifted', '2026-09-01T00:00:00Z'))).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/over 30 days ago/) });
    expect(gate('evidence', r, [], { ...RULES, evidenceCheckDays: 120 }, [], at('drifted', '2026-09-01T00:00:00Z')).verdict).toBe('fail');
    expect(gate('evidence', r, [], RULES, [], new Map())).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/is unverified: its excerpt was never checked/) });
    expect(gate('evidence', r, [], RULES, [], at('unreachable', '2026-11-25T10:00:00Z', { detail: 'HTTP 503' }))).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/could not be checked on 2026-11-25 \(unreachable: HTTP 503\)/) });
    expect(gate('evidence', r, [], RULES, [], at('verified', '2020-01-01T00:00:00Z')).verdict).toBe('pass');
    // The file's claim and a stored check: the newer counts.
    const claimed = (day: string) => record({ sources: [{ ...r.sources[0]!, verified_at: day, verified_from: { page: r.sources[0]!.url } }] });
    expect(gate('evidence', claimed('2026-11-28'), [], RULES, [], at('drifted', '2026-11-25T10:00:00Z')).verdict).toBe('pass');
    expect(gate('evidence', claimed('2026-11-20'), [], RULES, [], at('drifted', '2026-11-25T10:00:00Z')).verdict).toBe('fail');
  });

  it('source_authority: a record whose only supporting source is on an unknown host fails; a further unknown host warns', () => {
    const official = record().sources[0]!;
    const blog = { ...official, url: 'https://someones-blog.example/deadlines', title: 'A blog post' };
    expect(gate('source_authority', record({ sources: [blog] }))).toMatchObject({ verdict: 'fail', message: expect.stringMatching(/No supporting source is on a host the source policy treats as authoritative/) });
    expect(gate('source_authority', record({ sources: [official, blog] })).verdict).toBe('warn');
    expect(gate('source_authority', record({ sources: [official, { ...blog, relation: 'context' }] })).verdict).toBe('warn');
    expect(gate('source_authority', record({ sources: [official] })).verdict).toBe('pass');
  });

  it('freshness: warns after 18 months, fails after 36, and refuses a future date or none', () => {
    expect(gate('freshness', record({ reviewed_at: '2025-07-01' })).verdict).toBe('pass'); // 17 months
    expect(gate('freshness', record({ reviewed_at: '2025-05-01' })).verdict).toBe('warn'); // 19 months
    expect(gate('freshness', record({ reviewed_at: '2023-10-01' })).verdict).toBe('fail'); // 38 months
    expect(gate('freshness', record({ reviewed_at: '2027-01-01' })).message).toMatch(/in the future/);
    expect(gate('freshness', record({ reviewed_at: undefined })).message).toMatch(/has no reviewed_at/);
    expect(gate('freshness', record({ reviewed_at: '2025-05-01' }), [], { ...RULES, freshnessWarnMonths: 24 }).verdict).toBe('pass');
  });

  it('license: a missing licence warns with the default and fails without one; excerpts stay short quotes', () => {
    expect(gate('license', record({ license: undefined })).verdict).toBe('warn');
    expect(gate('license', record({ license: undefined }), [], { ...RULES, defaultLicense: null }).verdict).toBe('fail');
    expect(gate('license', record({ license: 'All-Rights-Reserved' })).message).toMatch(/is not one the corpus is published under/);
    const source = record().sources[0]!;
    const words = (n: number) => Array(n).fill('word').join(' ');
    expect(gate('license', record({ sources: [{ ...source, evidence_excerpt: words(50) }] })).verdict).toBe('pass');
    expect(gate('license', record({ sources: [{ ...source, evidence_excerpt: words(51) }] })).verdict).toBe('fail');
  });

  it('version_scope: semver ranges, a known vocabulary, and a constraint for versioned frameworks', () => {
    const applies = (entry: Record<string, unknown>) => record({ applies_to: [entry] });
    expect(gate('version_scope', applies({ kind: 'framework', name: 'reactjs', version_constraint: '>=16.8 <20 || ^21.0.0' })).verdict).toBe('pass');
    expect(gate('version_scope', applies({ kind: 'framework', name: 'React', version_constraint: 'latest' })).verdict).toBe('fail');
    expect(gate('version_scope', applies({ kind: 'framework', name: 'React' })).message).toMatch(/React \(framework\) has no version_constraint/);
    expect(gate('version_scope', applies({ kind: 'standard', name: 'WCAG' })).verdict).toBe('pass');
    expect(gate('version_scope', applies({ kind: 'language', name: 'Gleam' })).verdict).toBe('fail');
    const extended = mergePolicy(REPO_POLICY, [{ kind: 'technology', value: 'Gleam', note: null, added_at: '' }]);
    const gleam = applies({ kind: 'language', name: 'gleam' });
    expect(runGates({ record: gleam, rules: RULES, policy: extended, neighbours: [], checks: verified(gleam), now: NOW }).verdict).toBe('pass');
  });

  it('duplicates: fails at the similarity limit unless the record supersedes that one', () => {
    expect(gate('duplicates', record(), [neighbour(DUPLICATE_SIMILARITY - 0.01)]).verdict).toBe('pass');
    expect(gate('duplicates', record(), [neighbour(DUPLICATE_SIMILARITY)]).verdict).toBe('fail');
    expect(gate('duplicates', record({ supersedes: ['approved-one'] }), [neighbour(0.99)]).verdict).toBe('pass');
  });

  it('conflicts: warns on similar records of the same scope with opposite advice, and names the other', () => {
    const against = record({ recommendation: 'Do not put a deadline on outbound calls; let them run.' });
    expect(gate('conflicts', against, [neighbour(CONFLICT_SIMILARITY)])).toMatchObject({ verdict: 'warn', message: expect.stringMatching(/"approved-one"/) });
    expect(gate('conflicts', record(), [neighbour(0.6)]).verdict).toBe('pass'); // same advice
    expect(gate('conflicts', against, [neighbour(CONFLICT_SIMILARITY - 0.01)]).verdict).toBe('pass');
    expect(gate('conflicts', against, [neighbour(0.6, { topic: 'security' })]).verdict).toBe('pass');
    expect(gate('conflicts', against, [neighbour(0.6, { technologies: ['Python'] })]).verdict).toBe('pass');
  });

  it('reads the polarity of a recommendation from how it starts', () => {
    for (const text of ['Avoid OFFSET for deep pages.', "Don't store tokens in localStorage.", 'Never log secrets.', 'You should not disable TLS checks.', 'Do not use index keys.']) {
      expect(recommendsAgainst(text), text).toBe(true);
    }
    for (const text of ['Use keyset pagination. Avoid OFFSET.', 'Prefer parameterized queries.', 'Key every element by id.']) {
      expect(recommendsAgainst(text), text).toBe(false);
    }
  });

  it('judges hosts by the policy: exact or parent domain, path prefixes, blocks win', () => {
    expect(judgeSource(REPO_POLICY, 'https://react.dev/learn')).toMatchObject({ standing: 'authoritative' });
    expect(judgeSource(REPO_POLICY, 'https://github.com/modelcontextprotocol/typescript-sdk')).toMatchObject({ standing: 'authoritative' });
    expect(judgeSource(REPO_POLICY, 'https://github.com/someone/blog')).toEqual({ standing: 'unknown' });
    const blocked = mergePolicy(REPO_POLICY, [{ kind: 'blocked', value: 'react.dev', note: 'test', added_at: '' }]);
    expect(judgeSource(blocked, 'https://react.dev/learn')).toEqual({ standing: 'blocked', reason: 'test' });
  });
});
