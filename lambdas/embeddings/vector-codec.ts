/**
 * pgvector's text form. Vectors travel as text because the RDS Data API takes no
 * array parameters; nothing reads them back (a search names a cached embedding by
 * its key instead, see retrieval/candidate-search.ts). Non-finite components are
 * written as 0: pgvector rejects NaN.
 */
export function vectorLiteral(vector: ArrayLike<number>): string {
  return `[${Array.from(vector, (v) => (Number.isFinite(v) ? v : 0).toFixed(7)).join(',')}]`;
}
