/**
 * Counts tokens the way agents' models do (o200k_base via gpt-tokenizer) so that
 * `token_budget` bounds what a client actually pays for, and fits an answer to it.
 *
 * A BPE token always covers at least one character, so a text no longer than the
 * budget in characters cannot exceed it in tokens: the tokenizer (large rank tables)
 * is loaded only when an answer is longer than that, which keeps Lambda cold starts
 * short for the common case.
 *
 * The module is named through a variable so that a bundler cannot follow it: the
 * search function's bundle then carries no tokenizer code at all (its tables are
 * about 2.7 MB of JavaScript that Node would otherwise parse at every cold start),
 * and the stack ships the tokenizer beside the bundle as a package of its own
 * (`bundleModuleBeside` in `lib/bundling.ts`), read only at first use. Locally the
 * name resolves to the installed package as usual.
 */
import type { GuidanceResult, SearchKnowledgeOutput } from '../../schema/tools.ts';
import { BRIEF_LIST_ITEMS } from '../records/record-shape.ts';

const TOKENIZER_MODULE = 'gpt-tokenizer';
type Tokenizer = typeof import('gpt-tokenizer');
let tokenizer: Promise<Tokenizer> | undefined;
const importTokenizer = () => import(TOKENIZER_MODULE) as Promise<Tokenizer>;

/**
 * Loads the tokenizer now. Parsing its tables holds the event loop for a few hundred
 * milliseconds, so a long-running server pays that at start instead of in the
 * middle of answering (a Lambda keeps loading it lazily, for its cold start).
 */
export async function loadTokenizer(): Promise<void> {
  tokenizer ??= importTokenizer();
  await tokenizer;
}

export async function tokensWithin(value: unknown, budget: number): Promise<boolean> {
  const text = JSON.stringify(value);
  if (text.length <= budget) return true;
  tokenizer ??= importTokenizer();
  return (await tokenizer).countTokens(text) <= budget;
}

/**
 * Adds results in rank order while the whole answer stays within the budget: the
 * JSON an agent's model reads (the text content, which is the structured content
 * serialized), counted with the documented tokenizer. The budget is a hard cap. The
 * top result is always kept: if even its brief form is too big, it shrinks step by
 * step (`compactForms`) until it fits, and `truncated` says that something was cut.
 */
export async function fitToBudget(base: SearchKnowledgeOutput, results: GuidanceResult[], budget: number): Promise<SearchKnowledgeOutput> {
  const kept: GuidanceResult[] = [];
  let truncated = false;
  // Measured with the truncation note in place, so the final answer fits either way.
  const withNote = [...base.suggestions, TRUNCATION_NOTE];
  const fits = (list: GuidanceResult[]) => tokensWithin({ ...base, results: list, suggestions: withNote }, budget);
  for (const result of results) {
    if (await fits([...kept, result])) {
      kept.push(result);
      continue;
    }
    truncated = true;
    if (kept.length === 0) kept.push(await smallestFitting(result, fits));
    break;
  }
  return {
    ...base,
    results: kept,
    retrieval: { ...base.retrieval, truncated },
    suggestions: truncated ? withNote : base.suggestions,
  };
}

const TRUNCATION_NOTE = 'Cut to fit token_budget; get_guidance returns whole records.';

/** The first of the result's compact forms that fits, else the most compact one. */
async function smallestFitting(result: GuidanceResult, fits: (list: GuidanceResult[]) => Promise<boolean>): Promise<GuidanceResult> {
  const forms = compactForms(result);
  for (const form of forms) if (await fits([form])) return form;
  return forms.at(-1)!;
}

const firstWords = (text: string, n: number) => {
  const words = text.split(/\s+/);
  return words.length <= n ? text : `${words.slice(0, n).join(' ')} …`;
};

/**
 * A result from larger to smaller, every form still in the contract's shape: brief
 * (lists of two, no excerpts, no rationale); without summary, list items and all
 * sources but the first; the recommendation's first sentence; its first 20 words;
 * the least that still names the guidance (its first 10 words, no technologies or
 * sources); and, for identifiers that tokenize long, three words of title and four of
 * recommendation, for the smallest budgets. get_guidance has the whole record.
 */
function compactForms(result: GuidanceResult): GuidanceResult[] {
  const brief = briefOf(result);
  const bare: GuidanceResult = { ...brief, summary: undefined, conditions: [], exceptions: [], pitfalls: [], verification_checks: [], sources: brief.sources.slice(0, 1) };
  const sentence = bare.recommendation.split(/(?<=[.!?])\s/)[0]!;
  const firstSentence = { ...bare, recommendation: sentence === bare.recommendation ? sentence : `${sentence} …` };
  const shorter = { ...bare, title: firstWords(bare.title, 12), recommendation: firstWords(sentence, 20) };
  const least = {
    ...shorter,
    title: firstWords(bare.title, 6),
    recommendation: firstWords(sentence, 10),
    applies_to: [],
    updated_at: bare.updated_at.replace(/\.\d+Z$/, 'Z'),
    sources: [],
  };
  // Identifiers in a title or recommendation (ReportBatchItemFailures) cost many tokens a word:
  // the last form keeps only the first few words of each, which any record fits.
  const tiniest = { ...least, title: firstWords(bare.title, 3), recommendation: firstWords(sentence, 4) };
  return [brief, bare, firstSentence, shorter, least, tiniest];
}

function briefOf(result: GuidanceResult): GuidanceResult {
  const { rationale: _r, ...brief } = result;
  const short = (list: string[]) => list.slice(0, BRIEF_LIST_ITEMS);
  return {
    ...brief,
    conditions: short(brief.conditions),
    exceptions: short(brief.exceptions),
    pitfalls: short(brief.pitfalls),
    verification_checks: short(brief.verification_checks),
    sources: brief.sources.map(({ evidence_excerpt: _x, ...s }) => s),
  };
}
