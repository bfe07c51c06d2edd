/**
 * What a `no_match` tells the agent to do next. Never guidance itself: what the
 * corpus covers near the question (technologies and topics of the closest records,
 * with how many approved records each has), which requested technologies it has
 * nothing for, and, when the best candidate came close to being admitted, what to
 * change in the question: the words the knowledge base never uses, the technology
 * left unnamed, several decisions asked at once.
 */
import type { SearchKnowledgeInput } from '../../schema/tools.ts';
import type { Coverage, StoredRecord } from '../records/record-read.ts';
import { STACK_TECHNOLOGIES, canonicalTechnology, sameTechnology } from '../records/technology-vocabulary.ts';
import type { RankResult } from './rank.ts';
import type { Judged, SearchContext } from './selection.ts';

/** A candidate this close to the threshold (its probability over the threshold's) was nearly admitted. */
const NEAR_SHARE = 0.5;
/** Longer questions usually hold more than one decision. */
const LONG_QUESTION = 240;

export interface NoMatchInput {
  readonly input: SearchKnowledgeInput;
  readonly context: SearchContext;
  readonly ranking: Pick<RankResult, 'concepts' | 'analysis'>;
  /** The judged candidates, best first, and the threshold they missed. */
  readonly judged: readonly Judged[];
  readonly threshold: number;
  /** The closest records, for "closest coverage". */
  readonly near: readonly StoredRecord[];
  readonly coverage: Coverage;
}

/** The question's words that no record contains, as the agent wrote them. */
function unknownWords(query: string, concepts: RankResult['concepts']): string[] {
  const words = query.match(/[\p{L}][\p{L}\p{N}'’-]*/gu) ?? [];
  const out: string[] = [];
  for (const concept of concepts.concepts) {
    if (!concept.absent || concept.bonus) continue;
    const lexeme = concept.alternatives[0]?.[0];
    const word = lexeme && words.find((w) => w.toLowerCase().startsWith(lexeme.slice(0, Math.max(3, lexeme.length - 1))));
    if (word && !out.includes(word)) out.push(word);
  }
  return out.slice(0, 4);
}

function closeAdvice(args: NoMatchInput, best: Judged): string[] {
  const advice: string[] = [];
  const unknown = unknownWords(args.input.query, args.ranking.concepts);
  if (unknown.length > 0) {
    advice.push(`The knowledge base never uses ${unknown.map((w) => `"${w}"`).join(', ')}: drop them or use the words the documentation would.`);
  }
  const stack = best.record.applies_to.map((a) => canonicalTechnology(a.name)).filter((t) => STACK_TECHNOLOGIES.has(t));
  if (args.context.technologies.length === 0 && stack.length > 0) {
    advice.push(`Name the technology the decision is about; the closest guidance is for ${[...new Set(stack)].join(', ')}.`);
  }
  const questions = (args.input.query.match(/\?/g) ?? []).length;
  if (args.input.query.length > LONG_QUESTION || questions > 1) {
    advice.push('Ask about one decision at a time: this question names several things, and no record answers all of them.');
  }
  if (advice.length === 0) advice.push('Say the symptom or the decision in a sentence, with the exact error text if there is one.');
  return advice;
}

export function noMatchSuggestions(args: NoMatchInput): string[] {
  const { input, context, coverage } = args;
  const suggestions = ['Nothing in the knowledge base clears the relevance threshold for this decision; do not invent guidance for it.'];
  const uncovered = context.technologies.filter((t) => ![...coverage.technologies.keys()].some((name) => sameTechnology(name, t)));
  if (uncovered.length > 0) suggestions.push(`The knowledge base has no guidance for ${uncovered.join(', ')}.`);
  const best = args.judged.reduce<Judged | undefined>((top, j) => (!top || j.probability > top.probability ? j : top), undefined);
  if (best && best.probability >= NEAR_SHARE * args.threshold) suggestions.push(...closeAdvice(args, best));
  const counted = (names: Iterable<string>, counts: Map<string, number>) =>
    [...new Set(names)].filter((n) => counts.has(n)).map((n) => `${n} (${counts.get(n)} record${counts.get(n) === 1 ? '' : 's'})`);
  const nearTech = counted(args.near.flatMap((r) => r.applies_to.map((a) => a.name)), coverage.technologies);
  const nearTopics = counted(args.near.map((r) => r.topic), coverage.topics);
  if (nearTech.length + nearTopics.length > 0) {
    suggestions.push(
      `Closest coverage: ${[nearTech.length ? `technologies ${nearTech.join(', ')}` : '', nearTopics.length ? `topics ${nearTopics.join(', ')}` : ''].filter(Boolean).join('; ')}. ` +
        'Ask about a decision in one of these, or use the words a developer would use for the symptom or goal.',
    );
  }
  if (context.topics.length > 0 || input.task_type) suggestions.push('Drop `topic` and `task_type` if the decision fits another area: they only shape ranking.');
  if (input.query.length > 300) suggestions.push('Shorten the query to the decision itself; leave out code and unrelated context.');
  suggestions.push('If the guidance should exist, call submit_feedback with category "missing".');
  return suggestions;
}
