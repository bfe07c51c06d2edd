/**
 * `chatctx --remote FUNCTION …`: the command travels to the admin Lambda as its
 * event, and the function's answer (or error) comes back as the CLI's result.
 * The Lambda service is mocked at the SDK client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { runRemoteAdmin } from '../../lambdas/aws/remote-admin.ts';

const lambda = mockClient(LambdaClient);
afterEach(() => lambda.reset());
const payload = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)) as never;

describe('remote admin', () => {
  it('invokes the named function with the command and returns its result', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ result: { id: 'k1', key: 'kb_live_x' } }) });
    const result = await runRemoteAdmin('chatctx-admin', { op: 'keys.create', name: 'bot' }, new LambdaClient({ region: 'us-east-1' }));
    expect(result).toEqual({ id: 'k1', key: 'kb_live_x' });
    const call = lambda.commandCalls(InvokeCommand)[0]!.args[0].input;
    expect(call.FunctionName).toBe('chatctx-admin');
    expect(JSON.parse(new TextDecoder().decode(call.Payload as Uint8Array))).toEqual({ op: 'keys.create', name: 'bot' });
  });

  it('turns the function\'s error answer into the same error the local path throws', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ error: { code: 'not_found', message: 'No API key has that id.', details: {} } }) });
    await expect(runRemoteAdmin('f', { op: 'keys.revoke', id: 'x' }, new LambdaClient({ region: 'us-east-1' }))).rejects.toMatchObject({
      code: 'not_found',
      message: 'No API key has that id.',
    });
  });

  it('explains an invoke failure without leaking the SDK message', async () => {
    lambda.on(InvokeCommand).rejects(Object.assign(new Error('User: arn:aws:iam::123:user/x is not authorized'), { name: 'AccessDeniedException' }));
    await expect(runRemoteAdmin('f', { op: 'keys.list' }, new LambdaClient({ region: 'us-east-1' }))).rejects.toThrow(
      /Could not invoke f \(AccessDeniedException\)/,
    );
  });
});
