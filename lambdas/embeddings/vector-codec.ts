/**
 * pgvector's text form, both ways. Vectors travel as text because the RDS Data API
 * takes no array parameters, and they come back as text (`embedding::text`) from
 * either adapter. Non-finite components are written as 0: pgvector rejects NaN.
 */
export function vectorLiteral(vector: ArrayLike<number>): string {
  return `[${Array.from(vector, (v) => (Number.isFinite(v) ? v : 0).toFixed(7)).join(',')}]`;
}

export function parseVector(text: string): Float32Array {
  return Float32Array.from(text.replace(/^\[|\]$/g, '').split(','), Number);
}
