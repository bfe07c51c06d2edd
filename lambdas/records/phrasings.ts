/**
 * Phrasings that tell records apart: a record's title and its `asked_as` items. Two
 * records asked for in the same words would split every such question between
 * them, so the duplicates gate refuses a phrasing another record already uses. The
 * approved records' phrasings are kept by key in `record_phrasings` (bm25-index.ts
 * maintains it with the search index), so the check is one indexed lookup per batch.
 */
import type { Sql } from '../ports/sql.ts';
import type { RecordFile } from './record-schema.ts';
import { textSet } from './record-identifiers.ts';

/** A phrasing of a candidate that is already another record's title or `asked_as` phrasing. */
export interface PhrasingClash {
  /** The candidate's phrasing, as written. */
  readonly phrase: string;
  /** The record that already uses it (an approved one, or another record of the same batch). */
  readonly slug: string;
  /** Which of that record's fields holds it. */
  readonly field: 'title' | 'asked_as';
}

/** The key two phrasings are compared by, as `chatctx_phrase_key` computes it: lower case, letters and digits. */
export function phraseKey(phrase: string): string {
  return phrase.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

const phrasingsOf = (record: Pick<RecordFile, 'title' | 'asked_as'>) => [record.title, ...(record.asked_as ?? [])];

/**
 * For each record, its title and `asked_as` phrasings that another record already
 * uses as its title or a phrasing: an approved record (through `record_phrasings`,
 * one indexed lookup per batch) other than its own stored version, or another record
 * of the same batch. Two records asked for in the same words would split every
 * such question between them.
 */
export async function phrasingClashes(sql: Sql, records: readonly RecordFile[]): Promise<PhrasingClash[][]> {
  const keyed = records.map((r) => phrasingsOf(r).map((phrase) => ({ phrase, key: phraseKey(phrase) })).filter((p) => p.key !== ''));
  const keys = [...new Set(keyed.flat().map((p) => p.key))];
  const rows =
    keys.length === 0
      ? []
      : await sql.query<{ phrase: string; slug: string; is_title: boolean }>(
          `SELECT p.phrase, r.slug, chatctx_phrase_key(r.title) = p.phrase AS is_title
             FROM record_phrasings p JOIN records r ON r.id = p.record_id
            WHERE p.phrase = ANY (${textSet(1)}) AND r.status = 'approved'`,
          [JSON.stringify(keys)],
        );
  const owners = new Map<string, { slug: string; field: PhrasingClash['field'] }[]>();
  const own = (key: string, slug: string, field: PhrasingClash['field']) => owners.set(key, [...(owners.get(key) ?? []), { slug, field }]);
  for (const row of rows) own(row.phrase, row.slug, row.is_title ? 'title' : 'asked_as');
  records.forEach((r, i) => keyed[i]!.forEach((p, j) => own(p.key, r.slug, j === 0 ? 'title' : 'asked_as')));
  return records.map((record, i) => {
    const seen = new Set<string>();
    return keyed[i]!.flatMap((p) =>
      (owners.get(p.key) ?? [])
        .filter((o) => o.slug !== record.slug && !record.supersedes.includes(o.slug))
        .filter((o) => !seen.has(`${p.key}\u0000${o.slug}`) && seen.add(`${p.key}\u0000${o.slug}`))
        .map((o) => ({ phrase: p.phrase, slug: o.slug, field: o.field })),
    );
  });
}
