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

export async function tokensWithin(value: unknown, budget: number): Promise<boolean> {
  const text = JSON.stringify(value);
  if (text.length <= budget) return true;
  tokenizer ??= import('gpt-tokenizer');
  return (await tokenizer).countTokens(text) <= budget;
}
