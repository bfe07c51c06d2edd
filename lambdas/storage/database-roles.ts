/**
 * Database roles for least privilege on AWS: each function talks to Aurora (Data
 * API) as its own login role, whose password lives in its own Secrets Manager
 * secret, with grants for exactly the statements it runs. The migrate function
 * (master user) creates the roles, sets their passwords from the secrets and
 * re-applies the grants on every deploy, so a new table never stays open or closed
 * by accident. Role names are constants of this module, never input.
 */
import type { Sql } from '../ports/sql.ts';
import type { RoleCredentials } from '../ports/secrets.ts';

export const ROLE_GRANTS = {
  /**
   * search_knowledge: read guidance and retrieval tables, write analytics and the
   * query-embedding cache, and delete analytics past their retention (by age only:
   * it may read no column of search_events but the time).
   */
  chatctx_search: [
    'GRANT SELECT ON records, record_applies_to, record_sources, record_terms, term_stats, corpus_stats, record_passages TO chatctx_search',
    'GRANT SELECT, INSERT, UPDATE ON embedding_cache TO chatctx_search',
    'GRANT INSERT ON search_events TO chatctx_search',
    'GRANT SELECT (created_at), DELETE ON search_events TO chatctx_search',
    'GRANT USAGE ON SEQUENCE search_events_id_seq TO chatctx_search',
  ],
  /** get_guidance: read approved records and their children. */
  chatctx_reader: ['GRANT SELECT ON records, record_applies_to, record_sources TO chatctx_reader'],
  /** submit_feedback: insert feedback, and check that the record it names is approved (three columns, no text). */
  chatctx_feedback: ['GRANT INSERT ON feedback TO chatctx_feedback', 'GRANT SELECT (id, slug, status) ON records TO chatctx_feedback'],
  /** MCP gateway: look up a key by its hash and stamp its last use (to the hour, only when the hour changed). */
  chatctx_gateway: [
    'GRANT SELECT (id, key_hash, daily_quota, revoked_at, last_used_at) ON api_keys TO chatctx_gateway',
    'GRANT UPDATE (last_used_at) ON api_keys TO chatctx_gateway',
  ],
} as const;

export type RoleName = keyof typeof ROLE_GRANTS;

/** Creates or updates every role, its password and its grants. */
export async function applyRoles(sql: Sql, credentials: Readonly<Record<string, RoleCredentials>>): Promise<string[]> {
  const applied: string[] = [];
  for (const role of Object.keys(ROLE_GRANTS) as RoleName[]) {
    const secret = credentials[role];
    if (!secret) continue;
    if (secret.username !== role) throw new Error(`The secret for ${role} names another user.`);
    await sql.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} LOGIN; END IF; END $$`);
    // DDL takes no bind parameters: format() quotes the password as a literal server-side.
    const [statement] = await sql.query<{ ddl: string }>('SELECT format($1, $2::text) AS ddl', ['ALTER ROLE ' + role + ' WITH LOGIN PASSWORD %L', secret.password]);
    await sql.query(statement!.ddl);
    await sql.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${role}`);
    await sql.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
    for (const grant of ROLE_GRANTS[role]) await sql.query(grant);
    applied.push(role);
  }
  return applied;
}
