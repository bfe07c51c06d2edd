/**
 * An Embedder that remembers document embeddings on disk, keyed by a hash of the
 * model and the exact text, so a rerun of the evaluation embeds nothing it has
 * embedded before. One append-only binary file per model: each entry is a 32-byte
 * SHA-256 followed by `dimensions` float32 values. Evaluation only; the service
 * caches query embeddings in Postgres instead. The file format is
 * lambdas/embeddings/vector-file.ts.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder } from '../../lambdas/ports/embedder.ts';
import { decodeVectors, encodeVectors, vectorKey } from '../../lambdas/embeddings/vector-file.ts';

export class CachedEmbedder implements Embedder {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  private readonly vectors = new Map<string, Float32Array>();
  private readonly file: string;
  hits = 0;
  misses = 0;

  private constructor(private readonly inner: Embedder, dir: string) {
    this.provider = inner.provider;
    this.model = inner.model;
    this.dimensions = inner.dimensions;
    this.file = join(dir, `${inner.model.replace(/[^a-zA-Z0-9.-]+/g, '_')}-${inner.dimensions}.bin`);
  }

  static async open(inner: Embedder, dir: string): Promise<CachedEmbedder> {
    const cache = new CachedEmbedder(inner, dir);
    await mkdir(dir, { recursive: true });
    let data: Buffer;
    try {
      data = await readFile(cache.file);
    } catch {
      return cache;
    }
    for (const [key, vector] of decodeVectors(data, inner.dimensions)) cache.vectors.set(key, vector);
    return cache;
  }

  get size(): number {
    return this.vectors.size;
  }

  private key(text: string): string {
    return vectorKey(this.model, this.dimensions, text);
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const keys = texts.map((t) => this.key(t));
    const missing = [...new Set(keys.filter((k) => !this.vectors.has(k)))];
    this.hits += keys.length - missing.length;
    if (missing.length > 0) {
      const textOf = new Map(keys.map((k, i) => [k, texts[i]!]));
      const fresh = await this.inner.embed(missing.map((k) => textOf.get(k)!), signal);
      missing.forEach((k, i) => this.vectors.set(k, fresh[i]!));
      this.misses += missing.length;
      await appendFile(this.file, encodeVectors(missing.map((k, i) => [k, fresh[i]!] as const)));
    }
    return keys.map((k) => this.vectors.get(k)!);
  }
}
