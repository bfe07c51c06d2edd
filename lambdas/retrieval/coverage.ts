/**
 * How much of a question a record answers, measured on the words the index knows:
 * the share of the question's subject (its IDF mass) the record contains. This is
 * the lexical evidence the relevance policy weighs (`relevance.ts`); it ranks nothing.
 *
 * The question's words are sorted into concepts by `query-analysis.ts`:
 * - subject words: each counts with its IDF; a word no record contains counts
 *   `ABSENT_TERM_WEIGHT` times more, since it mostly means the question is about
 *   something the corpus does not cover ("matplotlib", "sourdough");
 * - a synonym term and its expansions: one concept, weighed as the term, matched as
 *   well as its best-matched alternative;
 * - bonus words (codes, identifiers, numbers, words with no subject): count only for a
 *   record that contains them;
 * - context words (the stack): not counted. When a question is nothing but context
 *   ("Kubernetes"), its context words are its subject.
 */
import type { QueryTerms } from './candidate-search.ts';
import type { QueryGroup } from './query-analysis.ts';

/**
 * Weight of a subject word no record contains, relative to the IDF it has (the
 * highest there is). 1.5 was measured best with the earlier relevance policy (0.5, 1
 * and 2 measured too); the relevance model also sees the share of such words apart.
 */
export const ABSENT_TERM_WEIGHT = 1.5;

interface Concept {
  /** Alternatives: lexeme sets any one of which expresses the concept (one for a plain word). */
  readonly alternatives: readonly (readonly string[])[];
  readonly weight: number;
  readonly bonus: boolean;
  readonly absent: boolean;
}

/** The question as concepts, built once per query and reused for every candidate. */
export interface QueryConcepts {
  readonly concepts: readonly Concept[];
  readonly idf: ReadonlyMap<string, number>;
  /** Share of the subject's weight carried by words no record contains. */
  readonly absentShare: number;
  /** Subject concepts (synonym groups count once). */
  readonly subjectCount: number;
  /** The IDF of a word one record contains: the most specific match there can be. */
  readonly maxIdf: number;
}

export interface MatchEvidence {
  /** Subject and matched bonus weight the record contains, over the question's: 0..1. */
  readonly coverage: number;
  /** The same over the words some record contains only. */
  readonly knownCoverage: number;
  /** Subject concepts matched, over the question's (each concept counts once, whatever its IDF). */
  readonly matchedShare: number;
  /** The rarest subject word matched, as its IDF over the largest IDF there is: 1 for a word only this record has. */
  readonly specificity: number;
}

export function queryConcepts(terms: QueryTerms, groups: readonly QueryGroup[], absentWeight = ABSENT_TERM_WEIGHT): QueryConcepts {
  const idf = new Map([...terms.lexemes].map(([lexeme, t]) => [lexeme, t.idf]));
  const df = (lexeme: string) => terms.lexemes.get(lexeme)?.df ?? 0;
  const role = new Map<string, QueryGroup['role']>();
  const lexemesOf = (i: number) => (terms.groups[i] ?? []).filter((l) => terms.lexemes.has(l));
  // Context outranks every other role: a stack name is never a subject word.
  for (const wanted of ['context', 'synonym', 'bonus'] as const) {
    groups.forEach((g, i) => {
      if (g.role === wanted) for (const l of lexemesOf(i)) if (!role.has(l)) role.set(l, wanted);
    });
  }
  const onlyContext = [...terms.lexemes.keys()].every((l) => role.get(l) === 'context');
  const concepts: Concept[] = [];
  const weightOf = (lexemes: readonly string[]) => lexemes.reduce((sum, l) => sum + (idf.get(l) ?? 0) * (df(l) === 0 ? absentWeight : 1), 0);
  const synonymConcepts = new Map<number, string[][]>();
  groups.forEach((g, i) => {
    if (g.role !== 'synonym') return;
    const own = lexemesOf(i).filter((l) => role.get(l) === 'synonym');
    const list = synonymConcepts.get(g.concept!) ?? [];
    list[g.alternative!] = own;
    synonymConcepts.set(g.concept!, list);
  });
  for (const alternatives of synonymConcepts.values()) {
    const written = alternatives[0] ?? [];
    if (written.length === 0) continue;
    const present = alternatives.filter((a) => a && a.length > 0);
    const known = present.filter((a) => a.some((l) => df(l) > 0));
    // A term the corpus never uses but whose expansion it does ("IDOR") weighs as that expansion.
    const weight = written.some((l) => df(l) > 0) || known.length === 0 ? weightOf(written) : Math.max(...known.map(weightOf));
    concepts.push({ alternatives: present, weight, bonus: false, absent: known.length === 0 });
  }
  for (const lexeme of terms.lexemes.keys()) {
    const r = role.get(lexeme);
    if (r === 'synonym' || (r === 'context' && !onlyContext)) continue;
    concepts.push({ alternatives: [[lexeme]], weight: weightOf([lexeme]), bonus: r === 'bonus', absent: df(lexeme) === 0 });
  }
  const subject = concepts.filter((c) => !c.bonus);
  const total = subject.reduce((sum, c) => sum + c.weight, 0);
  const absent = subject.filter((c) => c.absent).reduce((sum, c) => sum + c.weight, 0);
  // BM25's IDF of a word exactly one record contains.
  const maxIdf = Math.log(1 + (terms.records - 1 + 0.5) / 1.5);
  return { concepts, idf, absentShare: total > 0 ? absent / total : 0, subjectCount: subject.length, maxIdf };
}

/** The evidence one record's matched lexemes give. */
export function matchEvidence(query: QueryConcepts, matched: ReadonlySet<string>): MatchEvidence {
  let all = 0;
  let covered = 0;
  let known = 0;
  let knownCovered = 0;
  let subjects = 0;
  let subjectsMatched = 0;
  let rarest = 0;
  for (const concept of query.concepts) {
    const share = Math.max(
      ...concept.alternatives.map((alt) => {
        const mass = alt.reduce((sum, l) => sum + (query.idf.get(l) ?? 0), 0);
        return mass > 0 ? alt.reduce((sum, l) => sum + (matched.has(l) ? (query.idf.get(l) ?? 0) : 0), 0) / mass : 0;
      }),
    );
    if (!concept.bonus) {
      subjects += 1;
      if (share > 0) subjectsMatched += share;
      for (const alt of concept.alternatives) for (const l of alt) if (matched.has(l)) rarest = Math.max(rarest, query.idf.get(l) ?? 0);
    }
    if (concept.bonus && share === 0) continue;
    all += concept.weight;
    covered += concept.weight * share;
    if (!concept.absent) {
      const plain = Math.max(...concept.alternatives.map((alt) => alt.reduce((sum, l) => sum + (query.idf.get(l) ?? 0), 0)));
      known += plain;
      knownCovered += plain * share;
    }
  }
  return {
    coverage: all > 0 ? covered / all : 0,
    knownCoverage: known > 0 ? knownCovered / known : 0,
    matchedShare: subjects > 0 ? subjectsMatched / subjects : 0,
    specificity: query.maxIdf > 0 ? rarest / query.maxIdf : 0,
  };
}
