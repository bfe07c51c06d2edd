/**
 * Counts tokens the way agents' models do (o200k_base via gpt-tokenizer) so that
 * `token_budget` bounds what a client actually pays for.
 *
 * A BPE token always covers at least one character, so a text no longer than the
 * budget in characters cannot exceed it in tokens: the tokenizer (large rank tables)
 * is loaded only when an answer is longer than that, which keeps Lambda cold starts
 * short for the common case.
 */
let tokenizer: Promise<typeof import('gpt-tokenizer')> | undefined;

/**
 * Loads the tokenizer now. Parsing its tables holds the event loop for a few hundred
 * milliseconds, so a long-running server pays that at start instead of in the
 * middle of answering (a Lambda keeps loading it lazily, for its cold start).
 */
export async function loadTokenizer(): Promise<void> {
  tokenizer ??= import('gpt-tokenizer');
  await tokenizer;
}

export async function tokensWithin(value: unknown, budget: number): Promise<boolean> {
  const text = JSON.stringify(value);
  if (text.length <= budget) return true;
  tokenizer ??= import('gpt-tokenizer');
  return (await tokenizer).countTokens(text) <= budget;
}
