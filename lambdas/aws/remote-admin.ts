/**
 * Runs an owner command on a deployed stack: invokes the admin Lambda with the
 * caller's own AWS credentials (`chatctx --remote FUNCTION …`). IAM decides who may;
 * the function has no public route. The answer is opened by `admin-envelope.ts`, so
 * errors come back as the same `AppError`s the local admin path throws.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { AppError } from '../errors/app-error.ts';
import type { AdminCommand } from '../admin/admin-operations.ts';
import { openEnvelope } from '../admin/admin-envelope.ts';

export async function runRemoteAdmin(functionName: string, command: AdminCommand, client = new LambdaClient({})): Promise<unknown> {
  let output;
  try {
    output = await client.send(
      new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: new TextEncoder().encode(JSON.stringify(command)) }),
    );
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    throw new AppError('internal', `Could not invoke ${functionName} (${name}). Check the function name, region and your AWS credentials.`);
  }
  if (output.FunctionError) throw new AppError('internal', `The admin function failed (${output.FunctionError}); see its logs.`);
  let answer: unknown;
  try {
    answer = JSON.parse(new TextDecoder().decode(output.Payload ?? new Uint8Array()));
  } catch {
    answer = undefined;
  }
  return openEnvelope(answer);
}
