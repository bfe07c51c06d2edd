/**
 * Collections (`schema/012_collections.sql`): every record belongs to one, and a
 * caller sees the ones its key is scoped to (guests: `public`). Owners create,
 * list and rename them; records are imported into one and moved between them
 * (`record-move.ts`). Names are what owners type; everything stored elsewhere (a
 * record's collection, a key's scope, a search event's set) holds the id, so a
 * rename changes nothing anyone sees. `public` (id 1) cannot be renamed: it is the
 * collection guests see, and the name says so.
 */
import type { Sql } from '../ports/sql.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { textSet } from './record-identifiers.ts';

/** Lower case letters, digits and dashes, 1–40 characters, starting with a letter or digit. */
export const COLLECTION_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** Reserved: the scope that lets a key send feedback (`auth/caller-scope.ts`). */
const RESERVED = new Set(['feedback']);
/** The collection every store has (schema/012_collections.sql gives it id 1), which guests see. */
export const PUBLIC_COLLECTION = 'public';
const PUBLIC_ID = 1;

export interface CollectionInfo {
  readonly id: number;
  readonly name: string;
  readonly description: string | null;
  readonly created_at: string;
  /** Records in it, per status. */
  readonly records: { readonly approved: number; readonly candidate: number; readonly deprecated: number };
  /** Active keys scoped to it (guests not counted). */
  readonly keys: number;
}

/** Refuses a name owners could not type back or that would read as the feedback scope. */
export function checkCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name)) {
    throw new ValidationError(`"${name}" is not a collection name: use 1-40 lower-case letters, digits and dashes, starting with a letter or digit.`, {
      name,
    });
  }
  if (RESERVED.has(name)) throw new ValidationError(`"${name}" is reserved (it is the scope that lets a key send feedback); choose another name.`, { name });
}

/** The ids of these collection names; an unknown one is a `NotFoundError` naming every unknown name. */
export async function collectionIds(sql: Sql, names: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return new Map();
  const rows = await sql.query<{ id: number; name: string }>(`SELECT id, name FROM collections WHERE name = ANY (${textSet(1)})`, [JSON.stringify(unique)]);
  const found = new Map(rows.map((r) => [r.name, Number(r.id)]));
  const unknown = unique.filter((n) => !found.has(n));
  if (unknown.length > 0) {
    throw new NotFoundError(`No collection is named ${unknown.map((n) => `"${n}"`).join(', ')}. \`chatctx collections list\` shows them; \`collections create\` adds one.`, {
      unknown,
    });
  }
  return found;
}

/** Collection names by id (for showing stored ids to owners). */
export async function collectionNames(sql: Sql): Promise<Map<number, string>> {
  const rows = await sql.query<{ id: number; name: string }>('SELECT id, name FROM collections');
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}

export async function createCollection(sql: Sql, name: string, description: string | null): Promise<CollectionInfo> {
  checkCollectionName(name);
  const rows = await sql.query<{ id: number }>('INSERT INTO collections (name, description) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING id', [
    name,
    description,
  ]);
  if (rows.length === 0) throw new ConflictError(`A collection named "${name}" already exists.`, { name });
  return (await listCollections(sql)).find((c) => c.name === name)!;
}

export async function listCollections(sql: Sql): Promise<CollectionInfo[]> {
  const rows = await sql.query<{ id: number; name: string; description: string | null; created_at: string; approved: number; candidate: number; deprecated: number; keys: number }>(
    `SELECT c.id, c.name, c.description, c.created_at,
            count(r.id) FILTER (WHERE r.status = 'approved')::int AS approved,
            count(r.id) FILTER (WHERE r.status = 'candidate')::int AS candidate,
            count(r.id) FILTER (WHERE r.status = 'deprecated')::int AS deprecated,
            (SELECT count(*)::int FROM api_keys k WHERE k.revoked_at IS NULL AND c.id = ANY (k.collections)) AS keys
       FROM collections c LEFT JOIN records r ON r.collection_id = c.id
      GROUP BY c.id ORDER BY c.id`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    description: r.description,
    created_at: r.created_at,
    records: { approved: r.approved, candidate: r.candidate, deprecated: r.deprecated },
    keys: r.keys,
  }));
}

/** Renames a collection; keys and records follow (they hold its id). */
export async function renameCollection(sql: Sql, from: string, to: string): Promise<CollectionInfo> {
  checkCollectionName(to);
  const id = (await collectionIds(sql, [from])).get(from)!;
  if (id === PUBLIC_ID) throw new ValidationError('`public` cannot be renamed: it is the collection guests see.', { name: from });
  const taken = await sql.query('SELECT 1 FROM collections WHERE name = $1 AND id <> $2', [to, id]);
  if (taken.length > 0) throw new ConflictError(`A collection named "${to}" already exists.`, { name: to });
  await sql.query('UPDATE collections SET name = $2 WHERE id = $1', [id, to]);
  return (await listCollections(sql)).find((c) => c.id === id)!;
}
