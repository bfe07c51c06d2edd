/**
 * The migrate function's work over the Data API adapter (PGlite behind a
 * Data-API-compatible endpoint): migrations apply once, and every per-function
 * database role can do exactly what its function needs and nothing else, in both
 * layouts (one shared tool role, or one role per tool).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSql, startDataApiFixture } from '../support/data-api-fixture.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { SCHEMA_DIR } from '../../lambdas/storage/migrations.ts';
import { runMigrations } from '../../lambdas/aws/migrations-resource.ts';
import { ROLE_GRANTS, type RoleName } from '../../lambdas/storage/database-roles.ts';
import { searchCandidates } from '../../lambdas/retrieval/candidate-search.ts';
import { SearchCache } from '../../lambdas/retrieval/search-cache.ts';
import { vectorLiteral } from '../../lambdas/embeddings/vector-codec.ts';

let fixture: Awaited<ReturnType<typeof startDataApiFixture>>;
let sql: DataApiSql;

const secrets = Object.fromEntries(
  (Object.keys(ROLE_GRANTS) as RoleName[]).map((role) => [role, { username: role, password: `pw-${role}-'quoted'` }]),
) as Record<RoleName, { username: string; password: string }>;

const can = async (role: string, table: string, privilege: string) =>
  (await sql.query<{ ok: boolean }>('SELECT has_table_privilege($1, $2, $3) AS ok', [role, table, privilege]))[0]!.ok;
const canColumn = async (role: string, table: string, column: string, privilege: string) =>
  (await sql.query<{ ok: boolean }>('SELECT has_column_privilege($1, $2, $3, $4) AS ok', [role, table, column, privilege]))[0]!.ok;

beforeAll(async () => {
  fixture = await startDataApiFixture();
  sql = fixtureSql(fixture);
}, 240_000);

afterAll(async () => {
  await fixture?.close();
});

describe('migrate', () => {
  it('applies the schema and the roles, then applies nothing new on the next deploy', async () => {
    const first = await runMigrations(sql, SCHEMA_DIR, secrets);
    expect(first.Data.applied).toBe('001_initial,002_search_functions,003_owner_review,004_oauth,005_asked_as_and_relevance,006_oauth_families,007_source_checks,008_evidence_standing,009_oauth_expiry_indexes,010_pepper_fingerprint,011_owner_console,012_collections,013_vector_index_at_every_size,014_inline_passage_vectors,015_keyword_pruning,016_resident_keyword_index');
    expect(first.Data.roles.split(',').sort()).toEqual(Object.keys(ROLE_GRANTS).sort());
    const second = await runMigrations(sql, SCHEMA_DIR, secrets);
    expect(second.Data.applied).toBe('none');
    expect(second.PhysicalResourceId).toBe(first.PhysicalResourceId);
  });

  it('lets the search role run the retrieval statement, storing a new query embedding, and read the corpus generation', async () => {
    const key = 'e'.repeat(64);
    await sql.transaction(async (tx) => {
      await tx.query('SET LOCAL ROLE chatctx_search');
      const vector = { cacheKey: key, literal: vectorLiteral(new Float32Array(512).fill(1 / Math.sqrt(512))) };
      const found = await searchCandidates(tx, { text: 'retry transient failures', groups: [] }, vector, { filter: { technologies: ['Node.js'] }, pool: 10, keyword: true });
      expect(found.keyword).toEqual([]);
      expect(await new SearchCache().current(tx)).toBeGreaterThanOrEqual(0);
    });
    // The function swallows a failed cache write (caching is optional), so look for the row.
    expect(await sql.query('SELECT 1 FROM embedding_cache WHERE cache_key = $1', [key])).toHaveLength(1);
  });

  it('gives each function role exactly its privileges', async () => {
    // search_knowledge: reads guidance, writes analytics and the cache; no keys, no feedback.
    expect(await can('chatctx_search', 'records', 'SELECT')).toBe(true);
    expect(await can('chatctx_search', 'search_events', 'INSERT')).toBe(true);
    // …and deletes events past their retention, reading no column but their time.
    expect(await can('chatctx_search', 'search_events', 'DELETE')).toBe(true);
    expect(await canColumn('chatctx_search', 'search_events', 'created_at', 'SELECT')).toBe(true);
    expect(await canColumn('chatctx_search', 'search_events', 'query_hash', 'SELECT')).toBe(false);
    expect(await can('chatctx_search', 'embedding_cache', 'INSERT')).toBe(true);
    // …reads the owner's synonyms and the calibrated relevance profiles, and cannot change them.
    expect(await can('chatctx_search', 'query_synonyms', 'SELECT')).toBe(true);
    expect(await can('chatctx_search', 'relevance_profiles', 'SELECT')).toBe(true);
    expect(await can('chatctx_search', 'relevance_profiles', 'INSERT')).toBe(false);
    expect(await can('chatctx_search', 'query_synonyms', 'DELETE')).toBe(false);
    expect(await can('chatctx_search', 'records', 'UPDATE')).toBe(false);
    expect(await can('chatctx_search', 'api_keys', 'SELECT')).toBe(false);
    expect(await can('chatctx_search', 'feedback', 'INSERT')).toBe(false);
    // get_guidance: read-only.
    expect(await can('chatctx_reader', 'records', 'SELECT')).toBe(true);
    expect(await can('chatctx_reader', 'search_events', 'INSERT')).toBe(false);
    expect(await can('chatctx_reader', 'records', 'INSERT')).toBe(false);
    // submit_feedback: insert feedback and nothing else.
    expect(await can('chatctx_feedback', 'feedback', 'INSERT')).toBe(true);
    expect(await can('chatctx_feedback', 'feedback', 'SELECT')).toBe(false);
    expect(await can('chatctx_feedback', 'records', 'SELECT')).toBe(false);
    // …except what it takes to check that a named record is approved.
    expect(await canColumn('chatctx_feedback', 'records', 'slug', 'SELECT')).toBe(true);
    expect(await canColumn('chatctx_feedback', 'records', 'recommendation', 'SELECT')).toBe(false);
    // gateway: look keys up by hash, stamp last use; never rename, re-quota or read other tables.
    expect(await canColumn('chatctx_gateway', 'api_keys', 'key_hash', 'SELECT')).toBe(true);
    expect(await canColumn('chatctx_gateway', 'api_keys', 'last_used_at', 'UPDATE')).toBe(true);
    expect(await canColumn('chatctx_gateway', 'api_keys', 'name', 'SELECT')).toBe(false);
    expect(await canColumn('chatctx_gateway', 'api_keys', 'daily_quota', 'UPDATE')).toBe(false);
    expect(await canColumn('chatctx_gateway', 'api_keys', 'revoked_at', 'UPDATE')).toBe(false);
    expect(await can('chatctx_gateway', 'records', 'SELECT')).toBe(false);
    expect(await can('chatctx_gateway', 'api_keys', 'INSERT')).toBe(false);
    // gateway and OAuth: keep registrations, codes and refresh tokens (write, read, delete when used), never rewrite one.
    for (const table of ['oauth_clients', 'oauth_codes', 'oauth_refresh_tokens']) {
      for (const privilege of ['SELECT', 'INSERT', 'DELETE']) expect(await can('chatctx_gateway', table, privilege)).toBe(true);
      expect(await can('chatctx_gateway', table, 'UPDATE')).toBe(false);
      expect(await can('chatctx_runtime', table, 'SELECT')).toBe(false);
    }
  });

  it('gives the shared tool role what the three tools need together, but no API keys and no DDL', async () => {
    expect(await can('chatctx_runtime', 'records', 'SELECT')).toBe(true);
    expect(await can('chatctx_runtime', 'record_sources', 'SELECT')).toBe(true);
    expect(await can('chatctx_runtime', 'search_events', 'INSERT')).toBe(true);
    expect(await can('chatctx_runtime', 'embedding_cache', 'UPDATE')).toBe(true);
    expect(await can('chatctx_runtime', 'feedback', 'INSERT')).toBe(true);
    expect(await can('chatctx_runtime', 'feedback', 'SELECT')).toBe(false);
    expect(await can('chatctx_runtime', 'records', 'UPDATE')).toBe(false);
    expect(await canColumn('chatctx_runtime', 'api_keys', 'key_hash', 'SELECT')).toBe(false);
    expect(await can('chatctx_runtime', 'api_keys', 'UPDATE')).toBe(false);
    const [ddl] = await sql.query<{ ok: boolean }>("SELECT has_schema_privilege('chatctx_runtime', 'public', 'CREATE') AS ok");
    expect(ddl!.ok).toBe(false);
  });

  it('retires the roles a deploy no longer uses: no login, no privileges; the ones it uses keep theirs', async () => {
    const { chatctx_runtime, chatctx_gateway } = secrets;
    const result = await runMigrations(sql, SCHEMA_DIR, { chatctx_runtime, chatctx_gateway });
    expect(result.Data.roles.split(',').sort()).toEqual(['chatctx_gateway', 'chatctx_runtime']);
    const login = await sql.query<{ rolname: string; rolcanlogin: boolean }>(
      "SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname LIKE 'chatctx\\_%' ORDER BY rolname",
    );
    expect(login).toEqual([
      { rolname: 'chatctx_feedback', rolcanlogin: false },
      { rolname: 'chatctx_gateway', rolcanlogin: true },
      { rolname: 'chatctx_reader', rolcanlogin: false },
      { rolname: 'chatctx_runtime', rolcanlogin: true },
      { rolname: 'chatctx_search', rolcanlogin: false },
      { rolname: 'chatctx_verifier', rolcanlogin: false },
    ]);
    expect(await can('chatctx_search', 'records', 'SELECT')).toBe(false);
    expect(await canColumn('chatctx_feedback', 'records', 'slug', 'SELECT')).toBe(false);
    expect(await can('chatctx_runtime', 'records', 'SELECT')).toBe(true);
    expect(await canColumn('chatctx_gateway', 'api_keys', 'key_hash', 'SELECT')).toBe(true);
  });

  it('refuses a role secret that names another user', async () => {
    await expect(runMigrations(sql, SCHEMA_DIR, { ...secrets, chatctx_reader: { username: 'postgres', password: 'x' } })).rejects.toThrow(/names another user/);
    // Checked before anything changes: the other roles still log in.
    const [runtime] = await sql.query<{ login: boolean }>("SELECT rolcanlogin AS login FROM pg_roles WHERE rolname = 'chatctx_runtime'");
    expect(runtime!.login).toBe(true);
  });
});
