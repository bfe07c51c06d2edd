/**
 * `BedrockReranker`: the `Reranker` port on Amazon Bedrock's Rerank API
 * (`RerankCommand` of the Agents for Amazon Bedrock runtime), with a reranker
 * foundation model such as `cohere.rerank-v3-5:0` or `amazon.rerank-v1:0`.
 *
 * It sits beside the Bedrock embedder because it is the same kind of adapter: a
 * Bedrock model that helps find candidates and never writes guidance text.
 *
 * What it does:
 * - Sends the query and every document in one request (one query of at most 100
 *   documents is one billed unit), asks for a score for each (`numberOfResults`
 *   equal to the number of documents) and maps the scores back to the documents by
 *   the `index` each result carries: the SDK documents it as the document's position
 *   in the request's `sources`, and results come back sorted by score, not in
 *   request order.
 * - Holds the caller's deadline: the SDK gets an abort signal, and the call is also
 *   raced against a timer, so the deadline holds even while the SDK is still
 *   resolving credentials.
 * - Never throws (see the port): a timeout, an SDK error or a response that does not
 *   score every document exactly once is a failure outcome naming the error, never
 *   quoting its message.
 *
 * What it does not do: retry (the default client is built with `maxAttempts: 1`; a
 * search would rather answer without the reranker than wait out a back-off), log,
 * or keep the query anywhere.
 */
import { BedrockAgentRuntimeClient, RerankCommand, type RerankCommandOutput } from '@aws-sdk/client-bedrock-agent-runtime';
import { errorKind } from '../observability/logger.ts';
import type { RerankOptions, RerankOutcome, Reranker } from '../ports/reranker.ts';

export interface BedrockRerankerOptions {
  /** The reranker model, e.g. `cohere.rerank-v3-5:0`. */
  readonly modelId: string;
  readonly client?: BedrockAgentRuntimeClient;
  /** @default the Lambda's region (`AWS_REGION`, read by the SDK) */
  readonly region?: string;
}

/** The partition of a region, for the model ARN (the Rerank API takes an ARN, not a model id). */
function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

/** The ARN of a foundation model in `region`: what the request names and what the stack's IAM statement allows. */
export function foundationModelArn(region: string, modelId: string): string {
  return `arn:${partitionOf(region)}:bedrock:${region}::foundation-model/${modelId}`;
}

export class BedrockReranker implements Reranker {
  readonly provider = 'bedrock';
  readonly model: string;
  private readonly client: BedrockAgentRuntimeClient;

  constructor(options: BedrockRerankerOptions) {
    this.model = options.modelId;
    // No SDK retries: see the module header.
    this.client = options.client ?? new BedrockAgentRuntimeClient({ region: options.region, maxAttempts: 1 });
  }

  async rerank(query: string, documents: readonly string[], options: RerankOptions): Promise<RerankOutcome> {
    if (documents.length === 0) return { ok: true, scores: [] };
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<RerankOutcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new DOMException('The reranker missed its deadline.', 'TimeoutError'));
        resolve({ ok: false, failure: 'timeout' });
      }, options.deadlineMs);
    });
    const attempt = this.send(query, documents, controller.signal).then(
      (output) => scoresOf(output, documents.length),
      (error: unknown): RerankOutcome => (controller.signal.aborted ? { ok: false, failure: 'timeout' } : { ok: false, failure: 'error', error: errorKind(error) }),
    );
    try {
      return await Promise.race([attempt, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(query: string, documents: readonly string[], signal: AbortSignal): Promise<RerankCommandOutput> {
    const region = await this.client.config.region();
    const command = new RerankCommand({
      queries: [{ type: 'TEXT', textQuery: { text: query } }],
      sources: documents.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: documents.length,
          modelConfiguration: { modelArn: foundationModelArn(region, this.model) },
        },
      },
    });
    return this.client.send(command, { abortSignal: signal });
  }
}

/** One finite score per document, each document scored exactly once; anything else is a failure. */
function scoresOf(output: RerankCommandOutput, count: number): RerankOutcome {
  const scores = new Array<number | undefined>(count).fill(undefined);
  for (const result of output.results ?? []) {
    const { index, relevanceScore } = result;
    const valid = Number.isInteger(index) && index! >= 0 && index! < count && scores[index!] === undefined && Number.isFinite(relevanceScore);
    if (!valid) return { ok: false, failure: 'error', error: 'MalformedRerankResponse' };
    scores[index!] = relevanceScore!;
  }
  if (scores.some((score) => score === undefined)) return { ok: false, failure: 'error', error: 'IncompleteRerankResponse' };
  return { ok: true, scores: scores as number[] };
}
