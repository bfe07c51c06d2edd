/**
 * The starter corpus's passages come with their USE-lite embeddings
 * (guidance/embeddings/universal-sentence-encoder-lite-512.bin, written by
 * `npm run embeddings:seed`): the vectors the bundled encoder computes for exactly
 * those texts, so a first start or an evaluation does not spend a minute of one core
 * recomputing them. `SeededEmbedder` answers a text from the seed when the seed holds
 * it (same model, dimensions and text) and asks the encoder for every other one; a
 * changed record misses the seed and is embedded as before. The seed is data, never
 * trusted over the encoder for a text it does not hold.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Embedder } from '../ports/embedder.ts';
import { assertEmbeddableTexts } from './embeddable-text.ts';
import { decodeVectors, vectorKey } from './vector-file.ts';

export const EMBEDDING_SEED_DIR = fileURLToPath(new URL('../../guidance/embeddings/', import.meta.url));

/** Where the seed of a model lives. */
export function seedFile(model: string, dimensions: number): string {
  return `${EMBEDDING_SEED_DIR}${model.replace(/[^a-zA-Z0-9.-]+/g, '_')}-${dimensions}.bin`;
}

/** The seed of a model, or an empty one when none ships (a missing seed only costs time). */
export async function loadSeed(model: string, dimensions: number): Promise<Map<string, Float32Array>> {
  try {
    return decodeVectors(await readFile(seedFile(model, dimensions)), dimensions);
  } catch {
    return new Map();
  }
}

export class SeededEmbedder implements Embedder {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  /** Texts answered from the seed, and texts the encoder embedded. */
  seeded = 0;
  computed = 0;

  constructor(
    private readonly inner: Embedder,
    private readonly seed: ReadonlyMap<string, Float32Array>,
  ) {
    this.provider = inner.provider;
    this.model = inner.model;
    this.dimensions = inner.dimensions;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    assertEmbeddableTexts(texts);
    const found = texts.map((text) => this.seed.get(vectorKey(this.model, this.dimensions, text)));
    const missing = texts.filter((_, i) => found[i] === undefined);
    const fresh = missing.length > 0 ? await this.inner.embed(missing, signal) : [];
    this.seeded += texts.length - missing.length;
    this.computed += missing.length;
    let next = 0;
    // A copy, so no caller can change the seed through the vector it was given.
    return found.map((vector) => (vector ? Float32Array.from(vector) : fresh[next++]!));
  }

  estimateCostUsd(texts: readonly string[]): number {
    return this.inner.estimateCostUsd?.(texts) ?? 0;
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
