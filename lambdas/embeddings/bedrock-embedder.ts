/**
 * `BedrockEmbedder`: the hosted Embedder, Amazon Titan Text Embeddings V2
 * (`amazon.titan-embed-text-v2:0`) on Amazon Bedrock, asked for 512-dimensional
 * normalized vectors so that they sit in the same columns as USE-lite's.
 *
 * What it does:
 * - Sends one InvokeModel call per text (the model takes a single `inputText`),
 *   at most `maxConcurrency` at a time, and returns the vectors in input order.
 * - Gives every call its own deadline (`timeoutMs`) combined with the caller's
 *   AbortSignal. The combined signal goes to the SDK (`abortSignal`) and the call
 *   is also raced against it, so a deadline holds even while the SDK is still
 *   resolving credentials. A timed-out call rejects with a `TimeoutError`.
 * - On the first failure it stops starting calls and aborts those in flight.
 *
 * What it does not do:
 * - It does not retry, throttling included: a search request has a tight latency
 *   budget and its caller degrades to keyword search when embedding fails, which
 *   is better than waiting out a back-off. The default client is built with
 *   `maxAttempts: 1` for the same reason. `isThrottling` lets callers count or
 *   report throttling separately.
 * - It does not accept empty or whitespace-only texts (Titan rejects them too);
 *   `embed` rejects before any call is made.
 * - It never puts input text in an error message.
 */
import { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import type { Embedder } from '../ports/embedder.ts';
import { assertEmbeddableTexts } from './embeddable-text.ts';
import { positiveInteger } from '../errors/argument-checks.ts';
import { TITAN_EMBED_TEXT_V2 } from '../config/settings.ts';

export const BEDROCK_DIMENSIONS = 512;

/**
 * Titan Text Embeddings V2 on-demand price, USD per 1,000 input tokens: USD 0.02
 * per million. This is the published on-demand price at the time of writing (as
 * listed by the Vercel AI Gateway model page, which passes Bedrock's price
 * through); AWS prices vary by region and change, so check it against
 * https://aws.amazon.com/bedrock/pricing/ before relying on the estimate.
 */
export const TITAN_V2_USD_PER_1K_INPUT_TOKENS = 0.00002;

export interface BedrockEmbedderOptions {
  client?: BedrockRuntimeClient;
  region?: string;
  modelId?: string;
  /** Deadline for each InvokeModel call, in milliseconds. */
  timeoutMs?: number;
  /** Most InvokeModel calls in flight at once for one `embed` call. */
  maxConcurrency?: number;
}

/** True for errors that mean Bedrock is rate-limiting this account. */
export function isThrottling(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const candidate = error as {
    name?: unknown;
    $metadata?: { httpStatusCode?: unknown };
    $retryable?: { throttling?: unknown };
  };
  return (
    candidate.name === 'ThrottlingException' ||
    candidate.name === 'TooManyRequestsException' ||
    candidate.$metadata?.httpStatusCode === 429 ||
    candidate.$retryable?.throttling === true
  );
}

/**
 * Approximate cost of embedding `texts` with Titan Text Embeddings V2: about four
 * characters per token, rounded up per text (Bedrock bills each call separately).
 */
export function estimateBedrockCost(texts: readonly string[]): { tokens: number; usd: number } {
  const tokens = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return { tokens, usd: (tokens / 1000) * TITAN_V2_USD_PER_1K_INPUT_TOKENS };
}

/** Settles like `promise`, or rejects with `signal.reason` as soon as the signal aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

export class BedrockEmbedder implements Embedder {
  readonly provider = 'bedrock';
  readonly model: string;
  readonly dimensions = BEDROCK_DIMENSIONS;

  private readonly client: BedrockRuntimeClient;
  private readonly timeoutMs: number;
  private readonly maxConcurrency: number;

  constructor(options: BedrockEmbedderOptions = {}) {
    this.model = options.modelId ?? TITAN_EMBED_TEXT_V2;
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? 2000);
    this.maxConcurrency = positiveInteger('maxConcurrency', options.maxConcurrency ?? 4);
    // No SDK retries: see the module header.
    this.client = options.client ?? new BedrockRuntimeClient({ region: options.region, maxAttempts: 1 });
  }

  estimateCostUsd(texts: readonly string[]): number {
    return estimateBedrockCost(texts).usd;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    assertEmbeddableTexts(texts);
    signal?.throwIfAborted();

    const vectors = new Array<Float32Array>(texts.length);
    // Aborted on the first failure so that the other workers stop and their calls are cancelled.
    const failed = new AbortController();
    let next = 0;
    const worker = async () => {
      while (next < texts.length && !failed.signal.aborted) {
        const index = next++;
        try {
          vectors[index] = await this.embedOne(texts[index]!, signal, failed.signal);
        } catch (error) {
          failed.abort(error);
          throw error;
        }
      }
    };
    const workers = Array.from({ length: Math.min(this.maxConcurrency, texts.length) }, worker);
    await Promise.all(workers);
    return vectors;
  }

  private async embedOne(text: string, caller: AbortSignal | undefined, failed: AbortSignal): Promise<Float32Array> {
    const signals = [AbortSignal.timeout(this.timeoutMs), failed];
    if (caller) signals.push(caller);
    const signal = AbortSignal.any(signals);
    signal.throwIfAborted();

    const command = new InvokeModelCommand({
      modelId: this.model,
      contentType: 'application/json',
      accept: 'application/json',
      body: JSON.stringify({ inputText: text, dimensions: BEDROCK_DIMENSIONS, normalize: true }),
    });
    const output = await raceAbort(this.client.send(command, { abortSignal: signal }), signal);
    return parseEmbedding(output.body);
  }
}

function parseEmbedding(body: Uint8Array | undefined): Float32Array {
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder().decode(body ?? new Uint8Array()));
  } catch {
    throw new Error('Bedrock returned a response body that is not JSON.');
  }
  const embedding = (payload as { embedding?: unknown } | null)?.embedding;
  if (!Array.isArray(embedding) || embedding.length !== BEDROCK_DIMENSIONS) {
    throw new Error(`Bedrock did not return a ${BEDROCK_DIMENSIONS}-dimensional embedding.`);
  }
  if (!embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
    throw new Error('Bedrock returned an embedding with non-numeric values.');
  }
  return Float32Array.from(embedding as number[]);
}
