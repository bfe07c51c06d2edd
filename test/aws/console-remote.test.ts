/**
 * `chatctx --remote FUNCTION console`: the console built as `bin/console-command.ts`
 * builds it (every action a `runRemoteCommand` to the admin function), with the
 * Lambda service mocked at the SDK client so that each Invoke runs the real admin
 * entry over the Data API adapter against the PGlite-backed fixture. Driven in
 * process like a browser (`test/support/console-client.ts`): a key created and
 * revoked through the console's forms lands in the stack's store, and a command the
 * admin function refuses shows as a message on the page, not as a failure.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { fixtureSql, startDataApiFixture, type DataApiFixture, adminFunctionEnv } from '../support/data-api-fixture.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { runRemoteCommand } from '../../lambdas/aws/remote-import.ts';
import { createConsole, type OwnerConsole } from '../../lambdas/console/console-app.ts';

const ADMIN = 'fn-admin';
const lambda = mockClient(LambdaClient);
const secrets = mockClient(SecretsManagerClient);
const context = { functionName: 'admin', awsRequestId: 'req', getRemainingTimeInMillis: () => 900_000 } as unknown as Context;
let fixture: DataApiFixture;
let console: OwnerConsole;
/** The admin commands the console sent, in order (their `op`s). */
const invoked: string[] = [];
const logged: string[] = [];
/** Set to make the next Invoke fail as the SDK does without credentials. */
let failNextInvoke = false;

interface KeyRow {
  id: string;
  name: string;
  daily_quota: number | null;
  revoked_at: Date | null;
}
const storedKey = async (name: string) => (await fixture.db.query<KeyRow>('SELECT id, name, daily_quota, revoked_at FROM api_keys WHERE name = $1', [name])).rows;

beforeAll(async () => {
  fixture = await startDataApiFixture();
  Object.assign(process.env, adminFunctionEnv(fixture), {
    // The admin entry's own log lines are not what this file checks.
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ pepper: 'ab'.repeat(32) }) });
  await migrate(fixtureSql(fixture));
  const admin = (await import('../../lambdas/handlers/admin.ts')).handler as unknown as (event: unknown, context: Context) => Promise<unknown>;
  lambda.on(InvokeCommand).callsFake(async (input: { FunctionName: string; Payload: Uint8Array }) => {
    expect(input.FunctionName).toBe(ADMIN);
    if (failNextInvoke) {
      failNextInvoke = false;
      throw Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
    }
    const command = JSON.parse(new TextDecoder().decode(input.Payload));
    invoked.push(command.op);
    return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(await admin(command, context))) };
  });
  // As `chatctx --remote fn-admin console` builds it (bin/console-command.ts).
  console = createConsole({
    run: (command) => runRemoteCommand(ADMIN, command),
    target: `stack admin function ${ADMIN}`,
    mcpUrl: 'https://chatctx.example.com/mcp',
    logger: { info: (event) => logged.push(event), warn: (event) => logged.push(event), error: (event) => logged.push(event) },
  });
}, 300_000);

beforeEach(() => {
  invoked.length = 0;
  logged.length = 0;
});

afterAll(async () => {
  lambda.restore();
  secrets.restore();
  await fixture?.close();
});

describe('the --remote console', () => {
  it('creates a key through the admin function, shows it once with the stack\'s MCP URL, and revokes it there', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    const keys = await client.page('/console/keys');
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('stack admin function fn-admin');

    const created = await client.post('/console/keys', { name: 'remote agent', daily_quota: '75', scope: ['public', 'feedback'] });
    expect(created.status).toBe(303);
    const shown = await client.page('/console/keys/new');
    const key = /id="new-key"[^>]*value="([^"]+)"/.exec(shown.text)?.[1] ?? '';
    expect(key).toMatch(/^kb_live_/);
    expect(shown.text).toContain('https://chatctx.example.com/mcp');
    const [row] = await storedKey('remote agent');
    expect(row).toMatchObject({ name: 'remote agent', daily_quota: 75, revoked_at: null });

    await client.page('/console/keys');
    expect((await client.post(`/console/keys/${row!.id}/revoke`, {})).status).toBe(303);
    expect((await storedKey('remote agent'))[0]!.revoked_at).not.toBeNull();
    expect((await client.page('/console/keys?done=revoked')).text).toContain('Agents using it now get 401');
    const page = ['keys.list', 'keys.scopes_available'];
    expect(invoked).toEqual([...page, 'keys.create', ...page, 'keys.revoke', ...page]);
  });

  it('shows a command the admin function refuses as a message on the page', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    await client.page('/console/keys');
    // A whole number the form accepts, above the largest quota the admin command takes.
    const refused = await client.post('/console/keys', { name: 'too generous', daily_quota: '999999999', scope: ['public', 'feedback'] });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain('role="alert"');
    expect(text).toContain('daily_quota');
    expect(text).toContain('value="too generous"');
    expect(await storedKey('too generous')).toEqual([]);
    expect(invoked).toEqual(['keys.list', 'keys.scopes_available', 'keys.create', 'keys.list', 'keys.scopes_available']);

    const unknown = await client.post('/console/keys/00000000-0000-4000-8000-000000000000/quota', { daily_quota: '10' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('role="alert"');
    expect(logged).not.toContain('console_failed');
  });

  it('shows the error page, not a crash, when the admin function cannot be invoked', async () => {
    const client = new ConsoleClient(console);
    await client.signIn();
    failNextInvoke = true;
    const page = await client.page('/console/keys');
    expect(page.status).toBe(500);
    expect(page.text).toContain('Something failed');
    // The owner is told what to check, as the remote CLI tells it.
    expect(page.text).toContain('Check the function name, region and your AWS credentials');
    expect(logged).toContain('console_failed');
    expect((await client.page('/console/keys')).status).toBe(200);
  });
});
