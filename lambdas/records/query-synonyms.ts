/**
 * The synonyms applied to questions: the reviewed defaults in
 * guidance/policy/synonyms.json (common acronyms, HTTP status codes), plus the terms
 * an owner adds per store (`chatctx policy add-synonym TERM "expansion" …`, kept in
 * `query_synonyms`). An owner's entry for a term replaces the default's expansions.
 *
 * Terms are stored in lower case and matched as whole words in any case. This module
 * stores and merges; applying them to a query is retrieval's job
 * (lambdas/retrieval/query-analysis.ts). Changing the table moves the corpus
 * generation, so kept answers never outlive a synonym change.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import synonymsFile from '../../guidance/policy/synonyms.json' with { type: 'json' };

/** Term (lower case) → its expansions. */
export type SynonymList = ReadonlyMap<string, readonly string[]>;

export const SYNONYM_LIMITS = { termMaxChars: 60, expansionMaxChars: 120, expansionsMax: 8, storeMax: 1000 } as const;

const term = z.string().trim().min(1).max(SYNONYM_LIMITS.termMaxChars);
const expansions = z.array(z.string().trim().min(1).max(SYNONYM_LIMITS.expansionMaxChars)).min(1).max(SYNONYM_LIMITS.expansionsMax);

const synonymsFileSchema = z.strictObject({
  version: z.number().int().min(1),
  reviewed_at: z.iso.date(),
  description: z.string(),
  synonyms: z.record(term, expansions),
});

const normalTerm = (value: string) => value.trim().toLowerCase().replace(/\s+/g, ' ');

/** The reviewed defaults, validated once: a broken file fails loudly. */
export const DEFAULT_SYNONYMS: SynonymList = new Map(
  Object.entries(synonymsFileSchema.parse(synonymsFile).synonyms).map(([t, list]) => [normalTerm(t), list]),
);

export interface SynonymEntry {
  term: string;
  expansions: string[];
  added_at: string;
}

/** The owner's synonyms in this store. */
export async function storeSynonyms(sql: Sql): Promise<SynonymEntry[]> {
  return sql.query<SynonymEntry>('SELECT term, expansions, added_at FROM query_synonyms ORDER BY term', [], { json: ['expansions'] });
}

export function mergeSynonyms(base: SynonymList, entries: readonly Pick<SynonymEntry, 'term' | 'expansions'>[]): SynonymList {
  const merged = new Map(base);
  for (const entry of entries) merged.set(entry.term, entry.expansions);
  return merged;
}

/** The synonyms every search of this store applies. */
export async function effectiveSynonyms(sql: Sql): Promise<SynonymList> {
  return mergeSynonyms(DEFAULT_SYNONYMS, await storeSynonyms(sql));
}

/** Adds (or replaces) an owner's term, or with `remove` drops it; returns the store's entries. */
export async function changeSynonym(sql: Sql, change: { term: string; expansions?: readonly string[]; remove?: boolean }): Promise<SynonymEntry[]> {
  const key = normalTerm(term.parse(change.term));
  if (change.remove) {
    await sql.query('DELETE FROM query_synonyms WHERE term = $1', [key]);
    return storeSynonyms(sql);
  }
  const parsed = expansions.safeParse(change.expansions ?? []);
  if (!parsed.success) {
    throw new ValidationError(`Give 1 to ${SYNONYM_LIMITS.expansionsMax} expansions of at most ${SYNONYM_LIMITS.expansionMaxChars} characters for "${key}".`);
  }
  if (parsed.data.some((e) => normalTerm(e) === key)) throw new ValidationError(`An expansion of "${key}" must say something other than the term itself.`);
  const [count] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM query_synonyms WHERE term <> $1', [key]);
  if ((count?.n ?? 0) >= SYNONYM_LIMITS.storeMax) throw new ValidationError(`The store already has ${SYNONYM_LIMITS.storeMax} synonyms; remove some first.`);
  await sql.query(
    `INSERT INTO query_synonyms (term, expansions) VALUES ($1, $2::jsonb)
     ON CONFLICT (term) DO UPDATE SET expansions = excluded.expansions, added_at = now()`,
    [key, JSON.stringify(parsed.data)],
  );
  return storeSynonyms(sql);
}
