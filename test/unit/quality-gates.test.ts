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

const RULES: ReviewRules = { freshnessWarnMonths: 18, freshnessFailMonths: 36, excerptMaxWords: 50, defaultLicense: 'CC-BY-4.0' };
const NOW = new Date('2026-12-01T12:00:00Z');
const record = (extra: Record<string, unknown> = {}): RecordFile => recordFileSchema.parse(reviewedRecord('gate-probe', { reviewed_at: '2026-11-01', ...extra }));
const gate = (code: GateCode, r: RecordFile, neighbours: Neighbour[] = [], rules = RULES, clashes: PhrasingClash[] = []) =>
  runGates({ record: r, rules, policy: REPO_POLICY, neighbours, clashes, now: NOW }).gates.find((g) => g.code === code)!;
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
    const report = runGates({ record: record(), rules: RULES, policy: REPO_POLICY, neighbours: [], now: NOW });
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
    expect(runGates({ record: applies({ kind: 'language', name: 'gleam' }), rules: RULES, policy: extended, neighbours: [], now: NOW }).verdict).toBe('pass');
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
