/**
 * Owner operations: issue, list and revoke API keys, set a key's daily quota,
 * import guidance records. One validated command in, one JSON result out, so the
 * same operations run from the CLI directly, through the local admin endpoint, and
 * (on AWS) inside the IAM-only admin Lambda.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import { ValidationError } from '../errors/app-error.ts';
import { KeyRepository } from '../auth/key-repository.ts';
import { importRecords } from '../guidance/record-import.ts';
import { validateRecords } from '../guidance/record-files.ts';

const quota = z.number().int().min(0).max(100_000_000).nullable();

export const adminCommand = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('keys.create'), name: z.string().trim().min(1).max(120), daily_quota: quota.default(null) }),
  z.strictObject({ op: z.literal('keys.list') }),
  z.strictObject({ op: z.literal('keys.revoke'), id: z.string().min(1).max(64) }),
  z.strictObject({ op: z.literal('keys.set_quota'), id: z.string().min(1).max(64), daily_quota: quota }),
  z.strictObject({
    op: z.literal('records.import'),
    records: z.array(z.unknown()).min(1).max(100_000),
    /** Where each record came from (file:line), for error messages. */
    where: z.array(z.string()).optional(),
    approve: z.boolean().default(false),
  }),
]);
export type AdminCommand = z.input<typeof adminCommand>;

export interface AdminDeps {
  readonly sql: Sql;
  readonly pepper: () => Promise<Buffer>;
}

export async function runAdminCommand(deps: AdminDeps, raw: unknown): Promise<unknown> {
  const parsed = adminCommand.safeParse(raw);
  if (!parsed.success) {
    throw new ValidationError('Invalid admin command.', {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const command = parsed.data;
  const keys = new KeyRepository(deps.sql, deps.pepper);
  switch (command.op) {
    case 'keys.create':
      return keys.create(command.name, command.daily_quota);
    case 'keys.list':
      return keys.list();
    case 'keys.revoke':
      return keys.revoke(command.id);
    case 'keys.set_quota':
      return keys.setDailyQuota(command.id, command.daily_quota);
    case 'records.import': {
      const where = command.where;
      const records = validateRecords(command.records, (i) => where?.[i] ?? `record ${i + 1}`);
      return importRecords(deps.sql, records, { approve: command.approve });
    }
  }
}
