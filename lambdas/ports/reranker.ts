/**
 * The `Reranker` port: a cross-encoder that scores candidate texts against the
 * question (on AWS, a Bedrock reranker model through the Rerank API). Optional and
 * off by default: a search without one ranks and admits by its relevance profile
 * alone. Like embeddings, a reranker only orders and admits human-written records;
 * it never writes guidance text.
 *
 * `rerank` never rejects and settles by `deadlineMs`: a failure or a missed deadline
 * is an outcome, so the caller falls back to the usual ranking and reports the
 * answer as degraded. `error` names the error (its name or code), never its message,
 * which may echo the query.
 */
export type RerankOutcome =
  | { readonly ok: true; /** One score per document, in the order the documents were given; higher is more relevant. */ readonly scores: readonly number[] }
  | { readonly ok: false; readonly failure: 'timeout' | 'error'; readonly error?: string };

export interface RerankOptions {
  /** Milliseconds the call may take, credentials and retries included. */
  readonly deadlineMs: number;
}

export interface Reranker {
  /** Who runs the model, e.g. `bedrock`. */
  readonly provider: string;
  /** The model identifier; the reranker's relevance profile is keyed by it. */
  readonly model: string;
  /** Scores `documents` against `query`. The query goes to the model and nowhere else (no log, no store). */
  rerank(query: string, documents: readonly string[], options: RerankOptions): Promise<RerankOutcome>;
}
