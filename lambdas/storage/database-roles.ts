/**
 * Database roles for least privilege on AWS: the functions talk to Aurora (Data
 * API) as login roles whose passwords live in Secrets Manager, with grants for
 * exactly the statements they run. The migrate function (master user) creates the
 * roles, sets their passwords from the secrets and re-applies the grants on every
 * deploy, so a new table never stays open or closed by accident. Role names are
 * constants of this module, never input.
 *
 * Two layouts, chosen by the stack (`lib/database.ts`): by default the three tool
 * functions share `chatctx_runtime` (the union of the three tool roles' grants) and
 * the gateway keeps `chatctx_gateway`, the only role that may read API keys; with
 * per-function roles each tool has its own. No role here may run DDL.
 */
import type { Sql } from '../ports/sql.ts';
import type { RoleCredentials } from '../ports/secrets.ts';

/** What each function's statements need, as `GRANT <privilege> TO <role>` without the role. */
const PRIVILEGES = {
  /**
   * search_knowledge: read guidance and retrieval tables (with the owner's synonyms and
   * the calibrated relevance profiles, and the per-collection statistics; never the
   * collections' names or the keys' scopes: the gateway sends the caller's collection ids), write analytics and the query-embedding cache,
   * and delete analytics past their retention (by age only: it may read no column of
   * search_events but the time).
   */
  search: [
    'SELECT ON records, record_applies_to, record_sources, record_terms, collection_term_stats, collection_stats, corpus_stats, record_passages',
    'SELECT ON query_synonyms, relevance_profiles, record_phrase_terms, record_phrase_mass',
    'SELECT (url, excerpt_hash, status, checked_at) ON source_checks',
    'SELECT, INSERT, UPDATE ON embedding_cache',
    'INSERT ON search_events',
    'SELECT (created_at), DELETE ON search_events',
    'USAGE ON SEQUENCE search_events_id_seq',
  ],
  /** get_guidance: read approved records and their children, and how their quoted evidence stands. */
  reader: ['SELECT ON records, record_applies_to, record_sources', 'SELECT (url, excerpt_hash, status, checked_at) ON source_checks'],
  /** submit_feedback: insert feedback, and check that the record it names is approved and visible to the caller (four columns, no text). */
  feedback: ['INSERT ON feedback', 'SELECT (id, slug, status, collection_id) ON records'],
  /**
   * MCP gateway: look up a key by its hash (or, for an OAuth access token, its id) with its scopes (which collections it
   * sees, whether it may send feedback: the tools are told them, never the key) and stamp its last use (to the
   * hour, only when the hour changed); keep OAuth registrations, codes, refresh tokens and token families: write
   * them, read them, delete them when expired; update only what their life needs (a registration's confirmation,
   * the use counts of codes and refresh tokens, a family's expiry and revocation).
   */
  gateway: [
    'SELECT (id, key_hash, daily_quota, revoked_at, last_used_at, collections, may_submit_feedback) ON api_keys',
    'UPDATE (last_used_at) ON api_keys',
    'SELECT, INSERT, DELETE ON oauth_clients, oauth_codes, oauth_refresh_tokens, oauth_families',
    'UPDATE (confirmed_at, expires_at) ON oauth_clients',
    'UPDATE (uses) ON oauth_codes, oauth_refresh_tokens',
    'UPDATE (expires_at, revoked_at) ON oauth_families',
  ],
  /**
   * The scheduled source check: read which sources the records quote (slug, status, URL, excerpt; nothing
   * else of a record) and record what it found; it may write nothing but `source_checks`.
   */
  verifier: [
    'SELECT (id, slug, status) ON records',
    'SELECT (record_id, position, url, evidence_excerpt) ON record_sources',
    'SELECT, INSERT ON source_checks',
    'USAGE ON SEQUENCE source_checks_id_seq',
  ],
} as const;

const grantsTo = (role: string, ...privileges: (readonly string[])[]): string[] =>
  [...new Set(privileges.flat())].map((privilege) => `GRANT ${privilege} TO ${role}`);

export const ROLE_GRANTS = {
  chatctx_search: grantsTo('chatctx_search', PRIVILEGES.search),
  chatctx_reader: grantsTo('chatctx_reader', PRIVILEGES.reader),
  chatctx_feedback: grantsTo('chatctx_feedback', PRIVILEGES.feedback),
  /**
   * The three tools and the scheduled source check in one role (one secret fewer, USD 0.40 a month): everything they
   * may do together, still no API keys. The tools may so also record source checks; with per-function roles only
   * `chatctx_verifier` may.
   */
  chatctx_runtime: grantsTo('chatctx_runtime', PRIVILEGES.search, PRIVILEGES.reader, PRIVILEGES.feedback, PRIVILEGES.verifier),
  chatctx_gateway: grantsTo('chatctx_gateway', PRIVILEGES.gateway),
  chatctx_verifier: grantsTo('chatctx_verifier', PRIVILEGES.verifier),
} as const satisfies Record<string, readonly string[]>;

export type RoleName = keyof typeof ROLE_GRANTS;

/**
 * Creates or updates every role `credentials` names (password and grants), and
 * retires every other role of `ROLE_GRANTS` that exists: a role the stack no longer
 * uses (after switching layouts) keeps neither its login nor any privilege.
 *
 * Each role is rebuilt in one transaction: its grants are revoked and granted
 * again, so that a grant removed from `ROLE_GRANTS` disappears, and nobody sees the
 * state between the REVOKE and the GRANTs (a function running a statement at that
 * moment would get "permission denied"). Role DDL is transactional in Postgres.
 */
export async function applyRoles(sql: Sql, credentials: Readonly<Record<string, RoleCredentials>>): Promise<string[]> {
  const roles = Object.keys(ROLE_GRANTS) as RoleName[];
  for (const role of roles) {
    const secret = credentials[role];
    if (secret && secret.username !== role) throw new Error(`The secret for ${role} names another user.`);
  }
  const applied: string[] = [];
  for (const role of roles) {
    const secret = credentials[role];
    if (secret) {
      await sql.transaction((tx) => applyRole(tx, role, secret));
      applied.push(role);
    } else {
      await sql.transaction((tx) => retireRole(tx, role));
    }
  }
  return applied;
}

async function applyRole(tx: Sql, role: RoleName, secret: RoleCredentials): Promise<void> {
  await tx.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} LOGIN; END IF; END $$`);
  // DDL takes no bind parameters: format() quotes the password as a literal server-side.
  const [statement] = await tx.query<{ ddl: string }>('SELECT format($1, $2::text) AS ddl', ['ALTER ROLE ' + role + ' WITH LOGIN PASSWORD %L', secret.password]);
  await tx.query(statement!.ddl);
  await revokeAll(tx, role);
  await tx.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
  for (const grant of ROLE_GRANTS[role]) await tx.query(grant);
}

async function retireRole(tx: Sql, role: RoleName): Promise<void> {
  const [found] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_roles WHERE rolname = $1', [role]);
  if (!found || found.n === 0) return;
  await tx.query(`ALTER ROLE ${role} NOLOGIN`);
  await revokeAll(tx, role);
  await tx.query(`REVOKE USAGE ON SCHEMA public FROM ${role}`);
}

/** Table privileges (column privileges go with them) and sequence privileges. */
async function revokeAll(tx: Sql, role: RoleName): Promise<void> {
  await tx.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${role}`);
  await tx.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${role}`);
}
