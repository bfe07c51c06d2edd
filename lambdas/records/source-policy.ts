/**
 * The source policy the `source_authority`, `license` and `version_scope` gates
 * read: which hosts are authoritative (official documentation, standards bodies,
 * vendors' documentation), which the owner blocks, which licences the corpus may
 * be published under, and technology names added to the vocabulary.
 *
 * The reviewed, versioned part is `guidance/policy/source-policy.json` in the repository
 * (bundled into every runtime, so the CLI and the admin Lambda judge alike). An
 * owner extends it per store with `chatctx policy …`, kept in the `review_policy`
 * table, without editing the file.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import policyFile from '../../guidance/policy/source-policy.json' with { type: 'json' };

const hostName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9.-]+$/, 'a host name in lower case, without scheme or port');

export const SOURCE_KINDS = ['official_docs', 'standards_body', 'vendor_docs'] as const;

export const sourcePolicySchema = z.strictObject({
  version: z.number().int().min(1),
  reviewed_at: z.iso.date(),
  description: z.string(),
  authoritative: z.array(
    z.strictObject({
      host: hostName,
      path_prefix: z.string().startsWith('/').optional(),
      kind: z.enum(SOURCE_KINDS),
      publisher: z.string().min(1),
    }),
  ),
  blocked: z.array(z.strictObject({ host: hostName, reason: z.string().min(1) })),
  licenses: z.array(z.string().min(1)).min(1),
  technologies: z.array(z.string().min(1).max(80)),
});
export type SourcePolicy = z.output<typeof sourcePolicySchema>;

/** The reviewed policy file, validated once: a broken file fails loudly, not quietly trusting everything. */
export const REPO_POLICY: SourcePolicy = sourcePolicySchema.parse(policyFile);

export type PolicyKind = 'authoritative' | 'blocked' | 'technology';

export interface PolicyEntry {
  kind: PolicyKind;
  value: string;
  note: string | null;
  added_at: string;
}

/** The owner's additions kept in the store. */
export async function storePolicyEntries(sql: Sql): Promise<PolicyEntry[]> {
  return sql.query<PolicyEntry>('SELECT kind, value, note, added_at FROM review_policy ORDER BY kind, value');
}

/** The repository policy with the store's additions; a host the owner blocks stops being authoritative. */
export function mergePolicy(base: SourcePolicy, entries: readonly PolicyEntry[]): SourcePolicy {
  const added = (kind: PolicyKind) => entries.filter((e) => e.kind === kind);
  const blocked = [...base.blocked, ...added('blocked').map((e) => ({ host: e.value, reason: e.note ?? 'blocked by the owner' }))];
  const blockedHosts = new Set(added('blocked').map((e) => e.value));
  return {
    ...base,
    authoritative: [
      ...base.authoritative.filter((a) => !blockedHosts.has(a.host)),
      ...added('authoritative').map((e) => ({ host: e.value, kind: 'official_docs' as const, publisher: e.note ?? e.value })),
    ],
    blocked,
    technologies: [...base.technologies, ...added('technology').map((e) => e.value)],
  };
}

export async function effectivePolicy(sql: Sql): Promise<SourcePolicy> {
  return mergePolicy(REPO_POLICY, await storePolicyEntries(sql));
}

/** Adds (or, with `remove`, drops) an owner entry; host values are normalised to lower case. */
export async function changePolicy(sql: Sql, change: { kind: PolicyKind; value: string; note?: string; remove?: boolean }): Promise<PolicyEntry[]> {
  const value = change.kind === 'technology' ? change.value.trim() : change.value.trim().toLowerCase();
  if (change.remove) {
    await sql.query('DELETE FROM review_policy WHERE kind = $1 AND value = $2', [change.kind, value]);
  } else {
    await sql.query(
      `INSERT INTO review_policy (kind, value, note) VALUES ($1, $2, $3)
       ON CONFLICT (kind, value) DO UPDATE SET note = excluded.note`,
      [change.kind, value, change.note ?? null],
    );
  }
  return storePolicyEntries(sql);
}

export type HostStanding = { standing: 'authoritative'; kind: string; publisher: string } | { standing: 'blocked'; reason: string } | { standing: 'unknown' };

const underHost = (host: string, policyHost: string) => host === policyHost || host.endsWith(`.${policyHost}`);

/** How the policy judges one source URL: blocked wins over authoritative; a path prefix narrows a shared host. */
export function judgeSource(policy: SourcePolicy, url: string): HostStanding {
  const { hostname, pathname } = new URL(url);
  const host = hostname.toLowerCase();
  const blocked = policy.blocked.find((b) => underHost(host, b.host));
  if (blocked) return { standing: 'blocked', reason: blocked.reason };
  const trusted = policy.authoritative.find((a) => underHost(host, a.host) && (!a.path_prefix || pathname.startsWith(a.path_prefix)));
  if (trusted) return { standing: 'authoritative', kind: trusted.kind, publisher: trusted.publisher };
  return { standing: 'unknown' };
}
