/**
 * `npm run embeddings:seed`: writes the starter corpus's USE-lite embeddings
 * (lambdas/embeddings/embedding-seed.ts) for exactly the passages its records have
 * now, sorted by key so that the same corpus always gives the same file. Passages the
 * old file holds are reused (they are keyed by their exact text); new ones go to the
 * encoder itself, never to the seed. Run it after changing a starter record;
 * test/integration/embedding-seed.test.ts fails while the file misses a passage.
 */
import { writeFile } from 'node:fs/promises';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';
import { passagesOf } from '../../lambdas/embeddings/record-embeddings.ts';
import { UseLiteEmbedder } from '../../lambdas/embeddings/use-lite-embedder.ts';
import { loadSeed, seedFile } from '../../lambdas/embeddings/embedding-seed.ts';
import { encodeVectors, vectorKey } from '../../lambdas/embeddings/vector-file.ts';

const encoder = new UseLiteEmbedder();
const records = await readRecordFiles(STARTER_CORPUS_DIR);
const texts = [...new Set(records.flatMap((r) => passagesOf({ title: r.title, summary: r.summary ?? null, recommendation: r.recommendation, askedAs: r.asked_as ?? [] })))];
const old = await loadSeed(encoder.model, encoder.dimensions);
const key = (text: string) => vectorKey(encoder.model, encoder.dimensions, text);
const missing = texts.filter((t) => !old.has(key(t)));
const fresh = missing.length > 0 ? await encoder.embed(missing) : [];
const vectors = new Map(texts.flatMap((t) => (old.has(key(t)) ? [[key(t), old.get(key(t))!] as const] : [])));
missing.forEach((t, i) => vectors.set(key(t), fresh[i]!));
const file = seedFile(encoder.model, encoder.dimensions);
await writeFile(file, encodeVectors([...vectors].sort(([a], [b]) => (a < b ? -1 : 1))));
console.log(`${texts.length} passages of ${records.length} records: ${texts.length - missing.length} kept, ${missing.length} embedded, ${old.size - (texts.length - missing.length)} dropped; wrote ${file}`);
