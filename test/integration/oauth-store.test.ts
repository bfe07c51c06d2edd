/**
 * The OAuth rows as the gateway's database role sees them (PGlite, `SET ROLE
 * chatctx_gateway` after the roles are applied as on AWS): registrations, codes and
 * refresh tokens can be kept with exactly the grants the role has; a code and a
 * refresh token are each taken once; an expired one is never returned; a revoked
 * key shows on what its grant yields; an access token's key resolves by id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, type MemoryStore } from '../support/store.ts';
import { applyRoles } from '../../lambdas/storage/database-roles.ts';
import { KeyRepository } from '../../lambdas/auth/key-repository.ts';
import { OAuthStore } from '../../lambdas/oauth/oauth-store.ts';

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
}, 60_000);

afterAll(async () => {
  await store?.sql.close?.();
});

describe('OAuth rows under the gateway role', () => {
  const oauth = () => new OAuthStore(store.sql);
  const grant = () => ({ clientHash: 'client-hash', apiKeyId: key.id, resource: 'https://mcp.example.com/mcp' });

  it('keeps a registration until it expires', async () => {
    await oauth().addClient('registered', { clientName: 'Desktop', redirectUris: ['http://127.0.0.1:5000/cb'] }, t0, at(60));
    expect(await oauth().client('registered', at(59))).toEqual({ clientName: 'Desktop', redirectUris: ['http://127.0.0.1:5000/cb'] });
    expect(await oauth().client('registered', at(60))).toBeUndefined();
  });

  it('hands out a code once, and never after it expired', async () => {
    const code = { ...grant(), redirectUri: 'http://127.0.0.1:5000/cb', codeChallenge: 'c'.repeat(43) };
    await oauth().addCode('code-1', code, t0, at(300));
    expect(await oauth().takeCode('code-1', at(10))).toEqual({ ...code, keyActive: true });
    expect(await oauth().takeCode('code-1', at(11))).toBeUndefined();
    await oauth().addCode('code-2', code, t0, at(300));
    expect(await oauth().takeCode('code-2', at(300))).toBeUndefined();
  });

  it('rotates refresh tokens and reports a revoked key on the grant', async () => {
    await oauth().addRefreshToken('refresh-1', grant(), t0, at(3600));
    expect(await oauth().takeRefreshToken('refresh-1', at(1))).toEqual({ ...grant(), keyActive: true });
    expect(await oauth().takeRefreshToken('refresh-1', at(2))).toBeUndefined();

    await oauth().addRefreshToken('refresh-2', grant(), t0, at(3600));
    await asOwner();
    await owner.revoke(key.id);
    await asGateway();
    expect(await oauth().takeRefreshToken('refresh-2', at(3))).toEqual({ ...grant(), keyActive: false });
  });

  it('resolves an active key by id for access tokens, and nothing once it is revoked', async () => {
    const other = await (async () => {
      await asOwner();
      const created = await owner.create('second', null);
      await asGateway();
      return created;
    })();
    const gatewayKeys = new KeyRepository(store.sql, { pepper: async () => store.pepper });
    expect(await gatewayKeys.resolveById(other.id)).toEqual({ id: other.id, dailyQuota: null });
    expect(await gatewayKeys.resolveById(key.id)).toBeUndefined();
  });

  it('may not rewrite a stored grant', async () => {
    await expect(store.sql.query("UPDATE oauth_codes SET redirect_uri = 'https://attacker.example/cb'")).rejects.toThrow(/42501/); // insufficient_privilege
  });
});
