/**
 * Runs an owner command on a deployed stack: invokes the admin Lambda with the
 * caller's own AWS credentials (`chatctx --remote FUNCTION …`). IAM decides who may;
 * the function has no public route. Errors come back as the same `AppError`s the
 * local admin path throws.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { AppError, type ErrorCode } from '../errors/app-error.ts';
import type { AdminCommand } from '../admin/admin-operations.ts';

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
  const text = new TextDecoder().decode(output.Payload ?? new Uint8Array());
  if (output.FunctionError) throw new AppError('internal', `The admin function failed (${output.FunctionError}); see its logs.`);
  const body = JSON.parse(text || '{}') as { result?: unknown; error?: { code: ErrorCode; message: string; details?: Record<string, unknown> } };
  if (body.error) throw new AppError(body.error.code, body.error.message, body.error.details ?? {});
  return body.result;
}
