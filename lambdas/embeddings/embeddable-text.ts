/**
 * The one input rule every embedder shares: no empty or whitespace-only text.
 * Kept apart from the adapters so the Bedrock bundle does not pull in the
 * local sentence encoder.
 */

/** Rejects any text that cannot be embedded meaningfully, naming its position only. */
export function assertEmbeddableTexts(texts: readonly string[]): void {
  texts.forEach((text, index) => {
    if (typeof text !== 'string' || text.trim() === '') {
      throw new TypeError(`Cannot embed an empty or whitespace-only text (index ${index}).`);
    }
  });
}
