/**
 * The owner operations about collections (`records/collections.ts`): create, list
 * and rename them, move a record between them (a reviewed change, like a
 * rejection: who and a reason of at least 10 characters), and the collection
 * names the other operations take (`records.search`'s scope, `analytics.report`'s
 * filter) turned into the ids the store keeps. Owners type names; ids never reach
 * them.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import { callerScope, type CallerScope } from '../auth/caller-scope.ts';
import { collectionIds, collectionNames, createCollection, listCollections, renameCollection, type CollectionInfo } from '../records/collections.ts';
import { moveRecord, type MoveResult } from '../records/record-move.ts';

/** A collection name as typed; `checkCollectionName` judges it (so its message, not a pattern's, reaches the owner). */
export const collectionName = z.string().trim().min(1).max(40);

export const collectionCommands = [
  z.strictObject({ op: z.literal('collections.create'), name: collectionName, description: z.string().trim().min(1).max(500).optional() }),
  z.strictObject({ op: z.literal('collections.list') }),
  z.strictObject({ op: z.literal('collections.rename'), from: collectionName, to: collectionName }),
  z.strictObject({
    op: z.literal('records.move'),
    /** The record's slug or id. */
    record: z.string().min(1).max(120),
    /** The collection's name. */
    to: collectionName,
    reviewer: z.string().trim().min(1).max(120).default('unnamed reviewer'),
    reason: z.string().trim().min(10, 'a move needs a reason of at least 10 characters').max(1000),
  }),
] as const;

const collectionCommand = z.discriminatedUnion('op', [...collectionCommands]);
export type CollectionCommand = z.output<typeof collectionCommand>;

export async function runCollectionCommand(sql: Sql, command: CollectionCommand): Promise<CollectionInfo | CollectionInfo[] | MoveResult> {
  switch (command.op) {
    case 'collections.create':
      return createCollection(sql, command.name, command.description ?? null);
    case 'collections.list':
      return listCollections(sql);
    case 'collections.rename':
      return renameCollection(sql, command.from, command.to);
    case 'records.move':
      return moveRecord(sql, { record: command.record, to: command.to, reviewer: command.reviewer, reason: command.reason });
  }
}

/** The collections an owner's search reads, by name, and whether they are every collection (the default). */
export interface SearchedCollections {
  readonly names: readonly string[];
  readonly every_collection: boolean;
}

/**
 * The scope an owner's explained search runs with: the named collections, or every
 * collection when none is named (an owner sees everything; the answer says so, since
 * a guest or a key would see less).
 */
export async function ownerSearchScope(sql: Sql, names: readonly string[] | undefined): Promise<{ scope: CallerScope; searched: SearchedCollections }> {
  if (names && names.length > 0) {
    const ids = await collectionIds(sql, names);
    return { scope: callerScope([...ids.values()], true), searched: { names: [...ids.keys()], every_collection: false } };
  }
  const all = await collectionNames(sql);
  const ids = [...all.keys()].sort((a, b) => a - b);
  return { scope: callerScope(ids, true), searched: { names: ids.map((id) => all.get(id)!), every_collection: true } };
}

/** A collection named for a report, with its id; undefined for none. */
export async function namedCollection(sql: Sql, name: string | undefined): Promise<{ id: number; name: string } | undefined> {
  if (name === undefined) return undefined;
  return { id: (await collectionIds(sql, [name])).get(name)!, name };
}
