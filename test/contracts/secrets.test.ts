/**
 * The `Secrets` contract against both adapters: the 0600 file in a data directory,
 * and Secrets Manager (mocked at the SDK client, holding the JSON the stack
 * generates).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { FileSecrets } from '../../lambdas/secrets/file-secrets.ts';
import { SecretsManagerSecrets } from '../../lambdas/secrets/secrets-manager-secrets.ts';
import { describeSecretsContract } from './secrets.contract.ts';

describeSecretsContract('0600 file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'chatctx-secrets-'));
  const file = join(dir, 'pepper');
  await new FileSecrets({ path: file, create: true }).pepper();
  const original = await readFile(file, 'utf8');
  return {
    instance: () => new FileSecrets({ path: file }),
    corrupt: (value) => writeFile(file, value),
    restore: () => writeFile(file, original),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

describeSecretsContract('Secrets Manager', async () => {
  const service = mockClient(SecretsManagerClient);
  const generated = JSON.stringify({ pepper: 'Zq8wR2mXy7LkP4tVb9NcH3sJd6FgA1eUoQ5iWrTz0YxKlMnBvCpDqEsFgHjKlZx1' });
  let stored = generated;
  service.on(GetSecretValueCommand).callsFake(async () => ({ SecretString: stored }));
  const client = new SecretsManagerClient({ region: 'us-east-1' });
  return {
    instance: () => new SecretsManagerSecrets({ client, secretId: 'chatctx/pepper', maxAgeMs: 0 }),
    corrupt: async (value) => {
      stored = JSON.stringify({ pepper: value });
    },
    restore: async () => {
      stored = generated;
    },
    close: async () => service.restore(),
  };
});
