/**
 * What a search process keeps in memory between calls: whole answers to repeated
 * questions, the approved records it has read, and the settings every search reads
 * (synonyms, relevance profiles). Both are only as good as the
 * corpus they were read from, so every entry belongs to a corpus generation (the
 * number schema/002_search_functions.sql moves on with every change to what a
 * search can return) and a new generation empties the cache. A search reads the
 * generation first, so an answer is never reused after an import, a review or a
 * re-embedding has committed.
 *
 * Nothing here holds query text: answers are keyed by an HMAC of the whole input
 * (`hashSearchInput` in privacy/hashing.ts), and an answer's content is public
 * guidance.
 */
import { LRUCache } from 'lru-cache';
import type { Sql } from '../ports/sql.ts';
import type { SearchKnowledgeOutput } from '../../schema/tools.ts';
import type { StoredRecord } from '../records/record-read.ts';

export interface SearchCacheOptions {
  /** Answers kept (least recently used go first). @default 500 */
  readonly answers?: number;
  /** Records kept. @default 5000 */
  readonly records?: number;
}

/** The number every change a search can see moves on, in the change's own transaction (schema/002_search_functions.sql). */
export async function corpusGeneration(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ generation: number }>('SELECT generation FROM corpus_stats WHERE id = 1');
  return Number(row?.generation ?? 0);
}

export class SearchCache {
  private generation: number | undefined;
  private readonly answers: LRUCache<string, SearchKnowledgeOutput>;
  private readonly records: LRUCache<string, StoredRecord>;
  /** Whatever else a search reads once per generation (synonyms, relevance profiles), by name. */
  private readonly settings = new Map<string, Promise<unknown>>();

  constructor(options: SearchCacheOptions = {}) {
    this.answers = new LRUCache({ max: options.answers ?? 500 });
    this.records = new LRUCache({ max: options.records ?? 5000 });
  }

  /** The corpus generation now; entries of any other generation are dropped. */
  async current(sql: Sql): Promise<number> {
    const generation = await corpusGeneration(sql);
    if (generation !== this.generation) {
      this.answers.clear();
      this.records.clear();
      this.settings.clear();
      this.generation = generation;
    }
    return generation;
  }

  /** `load()`'s value for this generation, loaded once; a failed load is not kept. */
  perGeneration<T>(name: string, generation: number, load: () => Promise<T>): Promise<T> {
    if (generation !== this.generation) return load();
    let kept = this.settings.get(name) as Promise<T> | undefined;
    if (!kept) {
      kept = load();
      this.settings.set(name, kept);
      kept.catch(() => this.settings.get(name) === kept && this.settings.delete(name));
    }
    return kept;
  }

  answer(generation: number, key: string): SearchKnowledgeOutput | undefined {
    return generation === this.generation ? this.answers.get(key) : undefined;
  }

  keepAnswer(generation: number, key: string, output: SearchKnowledgeOutput): void {
    if (generation === this.generation) this.answers.set(key, output);
  }

  /** The records of `ids` already read in this generation, and the ids still to read. */
  knownRecords(generation: number, ids: readonly string[]): { found: StoredRecord[]; missing: string[] } {
    const found: StoredRecord[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const record = generation === this.generation ? this.records.get(id) : undefined;
      if (record) found.push(record);
      else missing.push(id);
    }
    return { found, missing };
  }

  keepRecords(generation: number, records: readonly StoredRecord[]): void {
    if (generation !== this.generation) return;
    for (const record of records) this.records.set(record.id, record);
  }
}
