/**
 * Counts tokens the way agents' models do (o200k_base via gpt-tokenizer) so that
 * `token_budget` bounds what a client actually pays for.
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
