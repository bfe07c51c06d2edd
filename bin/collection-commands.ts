/**
 * The collections part of the `chatctx` CLI: create, list and rename collections,
 * and move a record between them (a reviewed change: who and why, shown by
 * `records history`). Printing only; each command is one admin operation
 * (`lambdas/admin/collection-operations.ts`), so it runs the same on a local store,
 * through a running server and with `--remote` on AWS.
 */
import type { Command } from 'commander';
import { SETTINGS } from '../lambdas/config/settings.ts';
import type { CollectionInfo } from '../lambdas/records/collections.ts';
import type { MoveResult } from '../lambdas/records/record-move.ts';
import { reviewerName, type CliTools } from './review-commands.ts';

/** The collections as a table: name, records per status, active keys, description. */
export function collectionLines(list: readonly CollectionInfo[]): string[] {
  const width = Math.max(4, ...list.map((c) => c.name.length));
  const header = `${'name'.padEnd(width)}  approved  candidate  deprecated  keys  description`;
  const row = (c: CollectionInfo) =>
    `${c.name.padEnd(width)}  ${String(c.records.approved).padStart(8)}  ${String(c.records.candidate).padStart(9)}  ${String(c.records.deprecated).padStart(10)}  ${String(c.keys).padStart(4)}  ${c.description ?? ''}`;
  return [header, ...list.map(row), 'Guests see public; a key sees the collections it is scoped to (keys create --collections).'];
}

export function registerCollectionCommands(program: Command, records: Command, { admin, print }: CliTools): void {
  const collections = program
    .command('collections')
    .description('the collections records belong to: public (what guests see) and the ones you create, which only keys scoped to them see');

  collections
    .command('create')
    .description('create a collection; import into it with records import --collection NAME')
    .argument('<name>', '1-40 lower-case letters, digits and dashes ("feedback" is reserved)')
    .option('--description <text>', 'what it holds, for owners (up to 500 characters)')
    .action(async (name: string, opts: { description?: string }) => {
      const created = await admin<CollectionInfo>({ op: 'collections.create', name, description: opts.description });
      print(
        [
          `Created collection ${created.name}.`,
          `Import into it:    chatctx records import FILE --collection ${created.name}`,
          `Let a key see it:  chatctx keys create --name NAME --collections public,${created.name}`,
        ].join('\n'),
        created,
      );
    });

  collections
    .command('list')
    .description('every collection with its records per status and the active keys scoped to it')
    .action(async () => {
      const list = await admin<CollectionInfo[]>({ op: 'collections.list' });
      print(collectionLines(list).join('\n'), list);
    });

  collections
    .command('rename')
    .description('rename a collection (not public); its records and the keys scoped to it follow')
    .argument('<old>', 'the current name')
    .argument('<new>', 'the new name')
    .action(async (from: string, to: string) => {
      const renamed = await admin<CollectionInfo>({ op: 'collections.rename', from, to });
      print(`Renamed ${from} to ${renamed.name}.`, renamed);
    });

  records
    .command('move')
    .description('move a record to another collection: a reviewed change kept in its history (who, why, from, to); searches see it at once')
    .argument('<slug>', 'slug or id')
    .requiredOption('--to <collection>', 'the collection to move it to')
    .requiredOption('--reason <text>', 'why (10 to 1000 characters), kept with the move')
    .option('--reviewer <name>', `who moves it (default: $${SETTINGS.reviewer.env}, else your login name)`)
    .action(async (record: string, opts: { to: string; reason: string; reviewer?: string }) => {
      const moved = await admin<MoveResult>({ op: 'records.move', record, to: opts.to, reason: opts.reason, reviewer: reviewerName(opts.reviewer) });
      print(`Moved ${moved.slug} from ${moved.from} to ${moved.to}.`, moved);
    });
}
