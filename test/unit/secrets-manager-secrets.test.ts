/**
 * SecretsManagerSecrets against a mocked Secrets Manager: one read per cache
 * period (shared by concurrent callers), a retry after a failed read, both
 * secret forms, and errors that never quote the secret.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsManagerSecrets } from '../../lambdas/secrets/secrets-manager-secrets.ts';

const secretsManager = mockClient(SecretsManagerClient);

afterEach(() => {
  secretsManager.reset();
});

const GENERATED = 'Zq8wR2mXy7LkP4tVb9NcH3sJd6FgA1eUoQ5iWrTz0YxKlMnBvCpDqEsFgHjKlZx1';
const HEX = 'a1'.repeat(32);

function secrets(): SecretsManagerSecrets {
  return new SecretsManagerSecrets({ client: new SecretsManagerClient({ region: 'us-east-1' }), secretId: 'chatctx/pepper' });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The error a promise rejects with; fails the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }
  throw new Error('Expected the pepper read to fail.');
}

describe('SecretsManagerSecrets', () => {
  it('reads the secret once and serves later and concurrent callers from the cache', async () => {
    // Prepare
    secretsManager.on(GetSecretValueCommand).callsFake(async () => {
      await sleep(20);
      return { SecretString: JSON.stringify({ pepper: GENERATED }) };
    });
    const source = secrets();

    // Act
    const concurrent = await Promise.all([source.pepper(), source.pepper(), source.pepper()]);
    const later = await source.pepper();

    // Assess
    const calls = secretsManager.commandCalls(GetSecretValueCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({ SecretId: 'chatctx/pepper' });
    for (const pepper of [...concurrent, later]) expect(pepper.equals(Buffer.from(GENERATED, 'utf8'))).toBe(true);
  });

  it('reads the secret again once maxAgeMs has passed', async () => {
    // Prepare
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: JSON.stringify({ pepper: GENERATED }) })
      .resolves({ SecretString: JSON.stringify({ pepper: HEX }) });
    let clock = 1_000;
    const source = new SecretsManagerSecrets({
      client: new SecretsManagerClient({ region: 'us-east-1' }),
      secretId: 'chatctx/pepper',
      maxAgeMs: 30,
      now: () => clock,
    });

    // Act
    const first = await source.pepper();
    clock += 29;
    const cached = await source.pepper();
    clock += 1;
    const refreshed = await source.pepper();

    // Assess
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    expect(cached.equals(first)).toBe(true);
    expect(refreshed.equals(Buffer.from(HEX, 'hex'))).toBe(true);
  });

  it('does not cache a failed read: the next call tries again', async () => {
    // Prepare
    secretsManager
      .on(GetSecretValueCommand)
      .rejectsOnce(new Error('ServiceUnavailable'))
      .resolves({ SecretString: JSON.stringify({ pepper: GENERATED }) });
    const source = secrets();

    // Act
    const failed = source.pepper();
    await expect(failed).rejects.toThrow('ServiceUnavailable');
    const pepper = await source.pepper();

    // Assess
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    expect(pepper.equals(Buffer.from(GENERATED, 'utf8'))).toBe(true);
  });

  it('hex-decodes a pure-hex pepper of 64+ characters (the local pepper file format)', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: HEX }) });
    const pepper = await secrets().pepper();
    expect(pepper).toHaveLength(32);
    expect(pepper.toString('hex')).toBe(HEX);
  });

  it('accepts a plain SecretString that is the pepper itself', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: `${GENERATED}\n` });
    const pepper = await secrets().pepper();
    expect(pepper.equals(Buffer.from(GENERATED, 'utf8'))).toBe(true);
  });

  it('gives the same pepper for the JSON and the plain form of the same value', async () => {
    secretsManager.on(GetSecretValueCommand).resolvesOnce({ SecretString: HEX }).resolves({ SecretString: JSON.stringify({ pepper: HEX }) });
    const plain = await secrets().pepper();
    const json = await secrets().pepper();
    expect(plain.equals(json)).toBe(true);
  });

  it('rejects a too-short secret without quoting it', async () => {
    // Prepare
    const short = 'tiny-secret-value-42';
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: short }) });

    // Act
    const error = await rejection(secrets().pepper());

    // Assess
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/too short/);
    expect(error.message).not.toContain(short);
  });

  it('rejects a plain secret that is too short without quoting it', async () => {
    const short = 'abc123';
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: short });
    const error = await rejection(secrets().pepper());
    expect(error.message).toMatch(/too short/);
    expect(error.message).not.toContain(short);
  });

  it('rejects a missing SecretString, a JSON object without "pepper" and broken JSON, quoting none of them', async () => {
    // Prepare
    const broken = `{"pepper": "${GENERATED}"`;
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({})
      .resolvesOnce({ SecretString: JSON.stringify({ key: GENERATED }) })
      .resolvesOnce({ SecretString: broken });

    // Act
    const missing = await rejection(secrets().pepper());
    const noField = await rejection(secrets().pepper());
    const badJson = await rejection(secrets().pepper());

    // Assess
    expect(missing.message).toMatch(/missing/);
    expect(noField.message).toMatch(/"pepper"/);
    expect(badJson.message).toMatch(/does not parse/);
    for (const error of [noField, badJson]) {
      expect(error.message).not.toContain(GENERATED);
      expect(error.cause).toBeUndefined();
    }
  });
});
