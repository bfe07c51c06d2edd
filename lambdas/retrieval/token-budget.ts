/**
 * Counts tokens the way agents' models do (o200k_base via gpt-tokenizer) so that
 * `token_budget` bounds what a client actually pays for.
 */
import { countTokens } from 'gpt-tokenizer';

export function tokensOf(value: unknown): number {
  return countTokens(JSON.stringify(value));
}
