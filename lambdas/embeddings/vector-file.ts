/**
 * A file of embeddings keyed by text: each entry is the SHA-256 of (model, dimensions,
 * text), 32 bytes, then `dimensions` float32 values. The starter corpus ships one
 * (`embedding-seed.ts`) and the evaluation keeps its document cache in the same format.
 * This module only encodes and decodes; it neither embeds nor decides what to keep.
 */
import { createHash } from 'node:crypto';

/** The key of one text's embedding by one model. */
export function vectorKey(model: string, dimensions: number, text: string): string {
  return createHash('sha256').update(`${model}\u0000${dimensions}\u0000${text}`).digest('hex');
}

/** Every whole entry of a file's bytes; a truncated last entry (an interrupted write) is ignored. */
export function decodeVectors(data: Uint8Array, dimensions: number): Map<string, Float32Array> {
  const entry = 32 + 4 * dimensions;
  const vectors = new Map<string, Float32Array>();
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  for (let offset = 0; offset + entry <= bytes.length; offset += entry) {
    const floats = new Float32Array(dimensions);
    Buffer.from(floats.buffer).set(bytes.subarray(offset + 32, offset + entry));
    vectors.set(bytes.subarray(offset, offset + 32).toString('hex'), floats);
  }
  return vectors;
}

/** Entries as bytes, in the order given. */
export function encodeVectors(entries: Iterable<readonly [string, Float32Array]>): Buffer {
  const chunks: Buffer[] = [];
  for (const [key, vector] of entries) chunks.push(Buffer.from(key, 'hex'), Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
  return Buffer.concat(chunks);
}
