/**
 * The pepper guard, driven the way CloudFormation drives the migrate function:
 * the first deploy records the pepper's fingerprint; a later deploy with another
 * pepper (a replaced secret, a restore that did not adopt the old one) fails
 * before anything else changes; its rollback is skipped, not re-checked; a
 * database whose keys predate the fingerprint accepts only an adopted pepper.
 * Over the Data API adapter, against PGlite behind a Data-API-compatible endpoint;
 * and the secret handling (the tool role's password written beside the pepper)
 * against a mocked Secrets Manager client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { fixtureSql, startDataApiFixture } from '../support/data-api-fixture.ts';
import { createEvent, updateEvent } from '../support/custom-resource-events.ts';
import { DataApiSql } from '../../lambdas/storage/data-api-sql.ts';
import { SCHEMA_DIR } from '../../lambdas/storage/migrations.ts';
import { schemaHash } from '../../lambdas/storage/schema-hash.ts';
import { migrationsHandler, type DeployedPepper } from '../../lambdas/aws/migrations-resource.ts';
import { pepperFingerprint, type PepperSource } from '../../lambdas/storage/pepper-fingerprint.ts';
import { readRoleCredentials } from '../../lambdas/secrets/secrets-manager-secrets.ts';
import { silentLogger } from '../../lambdas/observability/logger.ts';

const OWN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:chatctx-runtime-AbCdEf';
const KEPT = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:chatctx-old-pepper-GhIjKl';
const PEPPER_A = Buffer.alloc(32, 0xa1);
const PEPPER_B = Buffer.alloc(32, 0xb2);
const ROLES = { chatctx_runtime: { username: 'chatctx_runtime', password: 'pw-runtime' }, chatctx_gateway: { username: 'chatctx_gateway', password: 'pw-gateway' } };

const fixtures: Awaited<ReturnType<typeof startDataApiFixture>>[] = [];
async function freshDatabase(): Promise<DataApiSql> {
  const fixture = await startDataApiFixture();
  fixtures.push(fixture);
  return fixtureSql(fixture);
}

afterAll(async () => {
  for (const fixture of fixtures) await fixture.close();
});

const HASH = schemaHash(SCHEMA_DIR);
const props = (pepperArn: string) => ({ SchemaHash: HASH, PepperSecretArn: pepperArn });
const create = (pepperArn: string) => createEvent(props(pepperArn));
const update = (pepperArn: string, oldArn: string) => updateEvent(props(pepperArn), props(oldArn));

/** The migrate function as deployed with this pepper secret. */
function deployedWith(sql: DataApiSql, secretArn: string, pepper: Buffer, source: PepperSource = 'stack', replace = false) {
  const deployed: DeployedPepper = { secretArn, source, replace, read: async () => pepper };
  return migrationsHandler({ schemaDir: SCHEMA_DIR, sql: () => sql, roles: async () => ROLES, logger: silentLogger, pepper: () => deployed });
}

const stored = async (sql: DataApiSql) => (await sql.query<{ fingerprint: string }>('SELECT fingerprint FROM pepper_fingerprint')).map((r) => r.fingerprint);

describe('the pepper guard in the migrate function', () => {
  let sql: DataApiSql;
  beforeAll(async () => {
    sql = await freshDatabase();
  }, 240_000);

  it('records the fingerprint on the first deploy (never the pepper), and accepts the same pepper after', async () => {
    const first = (await deployedWith(sql, OWN, PEPPER_A)(create(OWN))) as { Data: { pepper: string } };
    expect(first.Data.pepper).toBe('recorded');
    expect(await stored(sql)).toEqual([pepperFingerprint(PEPPER_A)]);
    expect(pepperFingerprint(PEPPER_A)).not.toContain(PEPPER_A.toString('hex'));
    const again = (await deployedWith(sql, OWN, PEPPER_A)(update(OWN, OWN))) as { Data: { pepper: string } };
    expect(again.Data.pepper).toBe('matched');
  });

  it('fails a deploy whose pepper differs, saying which context key fixes it, and changes nothing', async () => {
    await sql.query("INSERT INTO api_keys (id, name, key_hash) VALUES (gen_random_uuid(), 'existing', 'hash-under-pepper-a')");
    const before = await stored(sql);
    await expect(deployedWith(sql, KEPT, PEPPER_B)(update(KEPT, OWN))).rejects.toThrow(/not the one this database's API keys.*chatctx:pepperSecretArn/s);
    expect(await stored(sql)).toEqual(before);
  });

  it('skips the rollback of that deploy (the old pepper secret sent to the new code) instead of checking it again', async () => {
    const rolledBack = (await deployedWith(sql, KEPT, PEPPER_B)(update(OWN, KEPT))) as { Data: { skipped?: string; applied: string } };
    expect(rolledBack.Data.applied).toBe('none');
    expect(rolledBack.Data.skipped).toMatch(/pepper secret asked for is not the one this code was deployed with/);
  });

  it('records another pepper only when the owner replaces it on purpose (chatctx:replacePepper)', async () => {
    const replaced = (await deployedWith(sql, KEPT, PEPPER_B, 'adopted', true)(update(KEPT, OWN))) as { Data: { pepper: string } };
    expect(replaced.Data.pepper).toBe('replaced');
    expect(await stored(sql)).toEqual([pepperFingerprint(PEPPER_B)]);
    // From then on the old pepper is the one refused.
    await expect(deployedWith(sql, OWN, PEPPER_A)(update(OWN, KEPT))).rejects.toThrow(/chatctx:replacePepper=true/);
  });
});

describe('a database whose keys predate the fingerprint', () => {
  let sql: DataApiSql;
  beforeAll(async () => {
    sql = await freshDatabase();
    // The schema and a key as an earlier version left them: no fingerprint yet.
    await deployedWith(sql, OWN, PEPPER_A)(create(OWN));
    await sql.query('DELETE FROM pepper_fingerprint');
    await sql.query("INSERT INTO api_keys (id, name, key_hash) VALUES (gen_random_uuid(), 'from before', 'some-hash')");
  }, 240_000);

  it('refuses the pepper the stack generated, and accepts an adopted one, recording it', async () => {
    await expect(deployedWith(sql, OWN, PEPPER_B)(update(OWN, OWN))).rejects.toThrow(/made before its pepper was fingerprinted/);
    expect(await stored(sql)).toEqual([]);
    const adopted = (await deployedWith(sql, KEPT, PEPPER_A, 'adopted')(update(KEPT, OWN))) as { Data: { pepper: string } };
    expect(adopted.Data.pepper).toBe('recorded');
    expect(await stored(sql)).toEqual([pepperFingerprint(PEPPER_A)]);
  });
});

describe("the tool role's secret, generated holding the pepper", () => {
  const secretsManager = mockClient(SecretsManagerClient);
  afterAll(() => secretsManager.restore());

  it('gets a password written beside the pepper and the cluster address, which stay as they were', async () => {
    const runtime = { username: 'chatctx_runtime', dbname: 'chatctx', pepper: 'P'.repeat(64), host: 'cluster.example' };
    secretsManager.on(GetSecretValueCommand, { SecretId: OWN }).resolves({ SecretString: JSON.stringify(runtime) });
    secretsManager.on(GetSecretValueCommand, { SecretId: 'gateway' }).resolves({ SecretString: JSON.stringify({ username: 'chatctx_gateway', password: 'kept' }) });
    secretsManager.on(PutSecretValueCommand).resolves({});
    const roles = await readRoleCredentials(new SecretsManagerClient({}), { chatctx_runtime: OWN, chatctx_gateway: 'gateway' }, { fillMissingPasswords: true });
    const puts = secretsManager.commandCalls(PutSecretValueCommand);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.args[0].input.SecretId).toBe(OWN);
    const written = JSON.parse(puts[0]!.args[0].input.SecretString!) as Record<string, string>;
    expect(written).toEqual({ ...runtime, password: expect.stringMatching(/^[A-Za-z0-9]{40}$/) });
    expect(roles).toEqual({ chatctx_runtime: { username: 'chatctx_runtime', password: written.password }, chatctx_gateway: { username: 'chatctx_gateway', password: 'kept' } });
    await expect(readRoleCredentials(new SecretsManagerClient({}), { chatctx_runtime: OWN })).rejects.toThrow('The secret for chatctx_runtime has no username or password.');
  });
});
