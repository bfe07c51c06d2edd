/**
 * The OAuth rows as the gateway's database role sees them (PGlite, `SET ROLE
 * chatctx_gateway` after the roles are applied as on AWS): registrations, codes,
 * refresh tokens and token families can be kept with exactly the grants the role
 * has; unconfirmed registrations are capped; a code and a refresh token each give
 * one first use and then read as replays; an expired one is never usable; a
 * revoked family stops its tokens; a revoked key shows on what its grant yields;
 * an access token's key resolves by id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { applyRoles } from '../../lambdas/storage/database-roles.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { OAuthStore } from '../../lambdas/oauth/oauth-store.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

let store: MemoryStore;
let owner: KeyRepository;
let key: { id: string; key: string };
const t0 = new Date('2026-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

const asGateway = () => store.sql.query('SET ROLE chatctx_gateway');
const asOwner = () => store.sql.query('RESET ROLE');

beforeAll(async () => {
  store = await memoryStore({ starterCorpus: false });
  owner = new KeyRepository(store.sql, { pepper: async () => store.pepper });
  key = await owner.create('connector owner', 7);
  await applyRoles(store.sql, { chatctx_gateway: { username: 'chatctx_gateway', password: 'not-used-here' } });
  await asGateway();
}, 240_000);

afterAll(async () => {
  await store?.sql.close?.();
});

describe('OAuth rows under the gateway role', () => {
  const oauth = () => new OAuthStore(store.sql);
  const family = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const grant = (n = 1) => ({ clientHash: 'client-hash', apiKeyId: key.id, resource: 'https://mcp.example.com/mcp', familyId: family(n) });

  it('keeps a registration a day until it is confirmed, then for its full life', async () => {
    expect(await oauth().addClient('registered', { clientName: 'Desktop', redirectUris: ['http://127.0.0.1:5000/cb'] }, t0, at(60), 100)).toBe(true);
    expect(await oauth().client('registered', at(59))).toEqual({ clientName: 'Desktop', redirectUris: ['http://127.0.0.1:5000/cb'] });
    expect(await oauth().client('registered', at(60))).toBeUndefined();
    await oauth().addClient('confirmed', { clientName: null, redirectUris: ['http://127.0.0.1:5000/cb'] }, t0, at(60), 100);
    await oauth().confirmClient('confirmed', at(30), at(86_400));
    expect(await oauth().client('confirmed', at(3600))).toBeDefined();
    // Confirming again does not extend it further: only the first consent counts.
    await oauth().confirmClient('confirmed', at(40), at(999_999));
    expect(await oauth().client('confirmed', at(86_400))).toBeUndefined();
  });

  it('holds at most the cap of unconfirmed registrations, counting only live ones', async () => {
    const add = (hash: string, now: Date) => oauth().addClient(hash, { clientName: null, redirectUris: ['http://127.0.0.1:1/cb'] }, now, new Date(now.getTime() + 60_000), 2);
    const later = at(10_000);
    expect(await add('cap-1', later)).toBe(true);
    expect(await add('cap-2', later)).toBe(true);
    expect(await add('cap-3', later)).toBe(false);
    // A confirmed one no longer counts, nor does an expired one.
    await oauth().confirmClient('cap-1', later, at(100_000));
    expect(await add('cap-3', later)).toBe(true);
    expect(await add('cap-4', new Date(later.getTime() + 61_000))).toBe(true);
  });

  it('hands out a code once, recognises a second use as a replay, and never returns an expired one as usable', async () => {
    const code = { ...grant(1), redirectUri: 'http://127.0.0.1:5000/cb', redirectUriGiven: false, codeChallenge: 'c'.repeat(43) };
    await oauth().addCode('code-1', code, t0, at(300));
    expect(await oauth().takeCode('code-1', at(10))).toEqual({ ...code, keyActive: true, use: 'first' });
    expect(await oauth().takeCode('code-1', at(11))).toMatchObject({ familyId: family(1), use: 'replayed' });
    expect(await oauth().takeCode('unknown', at(11))).toBeUndefined();
    await oauth().addCode('code-2', code, t0, at(300));
    expect(await oauth().takeCode('code-2', at(300))).toMatchObject({ use: 'stale' });
  });

  it('rotates refresh tokens within a family, recognises a replay, and stops the family once revoked', async () => {
    expect(await oauth().addRefreshToken('refresh-1', grant(2), t0, at(3600))).toBe(true);
    expect(await oauth().familyActive(family(2), key.id, at(1))).toBe(true);
    expect(await oauth().takeRefreshToken('refresh-1', at(1))).toEqual({ ...grant(2), keyActive: true, use: 'first' });
    expect(await oauth().addRefreshToken('refresh-1b', grant(2), at(1), at(7200))).toBe(true);
    expect(await oauth().takeRefreshToken('refresh-1', at(2))).toMatchObject({ use: 'replayed', familyId: family(2) });

    await oauth().revokeFamily(grant(2), at(3), at(99_999));
    await oauth().revokeFamily(grant(2), at(4), at(99_999));
    expect(await oauth().familyActive(family(2), key.id, at(5))).toBe(false);
    // The rotated token dies with its family, and a new one cannot join it.
    expect(await oauth().takeRefreshToken('refresh-1b', at(5))).toMatchObject({ use: 'stale' });
    expect(await oauth().addRefreshToken('refresh-1c', grant(2), at(6), at(7200))).toBe(false);
  });

  it('revokes a family before its first token exists, so a racing first exchange cannot bring it to life', async () => {
    await oauth().revokeFamily(grant(4), at(1), at(99_999));
    expect(await oauth().addRefreshToken('refresh-4', grant(4), at(2), at(7200))).toBe(false);
    expect(await oauth().familyActive(family(4), key.id, at(3))).toBe(false);
  });

  it('reports a revoked key on the grant', async () => {
    await oauth().addRefreshToken('refresh-2', grant(3), t0, at(3600));
    await asOwner();
    await owner.revoke(key.id);
    await asGateway();
    expect(await oauth().takeRefreshToken('refresh-2', at(3))).toEqual({ ...grant(3), keyActive: false, use: 'first' });
  });

  it('resolves an active key by id for access tokens, and nothing once it is revoked', async () => {
    const other = await (async () => {
      await asOwner();
      const created = await owner.create('second', null);
      await asGateway();
      return created;
    })();
    const gatewayKeys = new KeyRepository(store.sql, { pepper: async () => store.pepper });
    // As the gateway's role: it may read the key's scope columns, which the tools are then told.
    expect(await gatewayKeys.resolveById(other.id)).toEqual({ id: other.id, dailyQuota: null, scope: GUEST_SCOPE });
    expect(await gatewayKeys.resolveById(key.id)).toBeUndefined();
  });

  it('may not rewrite a stored grant, nor un-revoke a family', async () => {
    await expect(store.sql.query("UPDATE oauth_codes SET redirect_uri = 'https://attacker.example/cb'")).rejects.toThrow(/42501/); // insufficient_privilege
    await expect(store.sql.query("UPDATE oauth_refresh_tokens SET family_id = gen_random_uuid()")).rejects.toThrow(/42501/);
    await expect(store.sql.query('UPDATE oauth_families SET api_key_id = api_key_id')).rejects.toThrow(/42501/);
  });
});
