/**
 * How a question's words are sorted before retrieval weighs them: the stack it names
 * (drivers imply their database and language, ambiguous words need a version), the
 * versions written after a technology, codes and identifiers, words with no subject,
 * and synonyms; then how much of the subject a record's matched words cover.
 */
import { describe, expect, it } from 'vitest';
import { analyseQuery, CONTEXT_WEIGHT } from '../../lambdas/retrieval/query-analysis.ts';
import { matchEvidence, queryConcepts } from '../../lambdas/retrieval/coverage.ts';
import type { QueryTerms } from '../../lambdas/retrieval/candidate-search.ts';
import { DEFAULT_SYNONYMS } from '../../lambdas/records/query-synonyms.ts';

const roles = (query: string, role: string) => analyseQuery(query, DEFAULT_SYNONYMS).groups.filter((g) => g.role === role).map((g) => g.text);

describe('query analysis', () => {
  it('reads a driver as its database and language, and keeps them out of the subject', () => {
    const a = analyseQuery('connection pool exhausted in node-postgres from our Django pods on EKS');
    expect(a.technologies).toEqual(['PostgreSQL', 'Node.js', 'Django', 'Kubernetes', 'AWS']);
    expect(roles('connection pool exhausted in node-postgres from our Django pods on EKS', 'context')).toEqual(['node-postgres', 'Django', 'EKS']);
    expect(a.groups.filter((g) => g.role === 'context').every((g) => g.weight === CONTEXT_WEIGHT)).toBe(true);
  });

  it('takes the version written after a technology, and reads an ambiguous word as one only with a version', () => {
    expect(analyseQuery('upgrading node 18 to Node.js v20.11 with PostgreSQL 16').versions).toEqual({ 'Node.js': '18', PostgreSQL: '16' });
    expect(analyseQuery('go back to the rest of the list').technologies).toEqual([]);
    expect(analyseQuery('goroutines leak in Go 1.22').versions).toEqual({ Go: '1.22' });
  });

  it('leaves standards and protocols in the subject: naming one usually is the question', () => {
    const a = analyseQuery('CORS preflight fails for a JWT in the Authorization header');
    expect(a.technologies).toEqual([]);
    expect(roles('CORS preflight fails for a JWT in the Authorization header', 'context')).toEqual([]);
  });

  it('makes error codes, identifiers, numbers and words without a subject count only where they match', () => {
    const bonus = roles('Error: connect ECONNREFUSED 127.0.0.1:5432 from HikariPool after trying again, exit code 137', 'bonus')[0]!.split(' ');
    expect(bonus).toEqual(expect.arrayContaining(['Error', 'ECONNREFUSED', '127.0.0.1:5432', 'HikariPool', 'trying', '137']));
    expect(bonus).not.toContain('connect');
  });

  it('expands a synonym term and searches the expansion too', () => {
    const a = analyseQuery('IDOR in our order API', DEFAULT_SYNONYMS);
    expect(a.searchText).toMatch(/insecure direct object reference/);
    expect(a.groups.filter((g) => g.role === 'synonym').map((g) => [g.text, g.alternative])).toEqual([
      ['IDOR', 0],
      ['insecure direct object reference', 1],
      ['object level authorization', 2],
    ]);
    expect(analyseQuery('video stream', DEFAULT_SYNONYMS).searchText).toBe('video stream');
  });
});

/** The index's view of a query: lexeme → [IDF, document frequency], and each group's lexemes. */
const terms = (lexemes: Record<string, [number, number]>, groups: string[][] = []): QueryTerms => ({
  lexemes: new Map(Object.entries(lexemes).map(([l, [idf, df]]) => [l, { idf, df }])),
  groups,
  records: 100,
});

describe('coverage', () => {
  it('ignores the stack: a record that holds the subject covers all of it', () => {
    const query = queryConcepts(terms({ pool: [2, 3], exhaust: [3, 2], django: [4, 1] }, [['django']]), [{ text: 'Django', role: 'context', weight: CONTEXT_WEIGHT }]);
    expect(matchEvidence(query, new Set(['pool', 'exhaust'])).coverage).toBe(1);
  });

  it('counts a bonus word only for a record that contains it', () => {
    const query = queryConcepts(terms({ pool: [2, 3], econnreset: [4, 1] }, [['econnreset']]), [{ text: 'ECONNRESET', role: 'bonus', weight: 1 }]);
    expect(matchEvidence(query, new Set(['pool'])).coverage).toBe(1);
    expect(matchEvidence(query, new Set(['pool', 'econnreset'])).coverage).toBe(1);
    expect(matchEvidence(query, new Set(['econnreset'])).coverage).toBeCloseTo(4 / 6);
  });

  it('weighs a word no record contains more, and reports its share apart', () => {
    const query = queryConcepts(terms({ pool: [2, 3], hiccup: [5, 0] }), []);
    expect(matchEvidence(query, new Set(['pool'])).coverage).toBeCloseTo(2 / (2 + 1.5 * 5));
    expect(matchEvidence(query, new Set(['pool'])).knownCoverage).toBe(1);
    expect(query.absentShare).toBeCloseTo((1.5 * 5) / (2 + 1.5 * 5));
  });

  it('treats a synonym term and its expansion as one concept, matched by either', () => {
    const groups = [
      { text: 'IDOR', role: 'synonym' as const, weight: 1, concept: 0, alternative: 0 },
      { text: 'object level authorization', role: 'synonym' as const, weight: 1, concept: 0, alternative: 1 },
    ];
    const query = queryConcepts(terms({ idor: [5, 0], object: [2, 5], level: [2, 5], author: [1, 9], api: [1, 9] }, [['idor'], ['author', 'level', 'object']]), groups);
    expect(query.concepts).toHaveLength(2);
    // The corpus never says "IDOR", so the concept weighs as its expansion does.
    expect(matchEvidence(query, new Set(['object', 'level', 'author', 'api'])).coverage).toBe(1);
    expect(matchEvidence(query, new Set(['api'])).coverage).toBeCloseTo(1 / 6);
  });
});
