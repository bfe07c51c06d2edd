/**
 * The `ToolInvoker` contract against both adapters: the local runtime's call in
 * this process, and the AWS gateway's Lambda Invoke, with the Lambda service
 * mocked at the SDK client: each Invoke's payload is decoded and handed to the
 * same tool handlers by the tool functions' own reading of it (`aws/tool-lambda.ts`),
 * and the result goes back serialized.
 */
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { memoryStore } from '../support/store.ts';
import { InProcessToolInvoker } from '../../lambdas/tools/in-process-invoker.ts';
import { LambdaToolInvoker } from '../../lambdas/aws/lambda-tool-invoker.ts';
import type { ToolName } from '../../lambdas/tools/tool-handlers.ts';
import { toolCallOf, type ToolEvent } from '../../lambdas/aws/tool-lambda.ts';
import { describeToolInvokerContract } from './tool-invoker.contract.ts';

describeToolInvokerContract('in process', async () => {
  const store = await memoryStore();
  return { invoker: new InProcessToolInvoker(store.tools), sql: store.sql, close: () => store.sql.close() };
});

describeToolInvokerContract('Lambda Invoke', async () => {
  const store = await memoryStore();
  const functions: Record<ToolName, string> = { search_knowledge: 'fn-search', get_guidance: 'fn-guidance', submit_feedback: 'fn-feedback' };
  const byFunction = Object.fromEntries(Object.entries(functions).map(([tool, fn]) => [fn, store.tools[tool as ToolName]]));
  const service = mockClient(LambdaClient);
  service.on(InvokeCommand).callsFake(async (input: { FunctionName: string; Payload: Uint8Array }) => {
    const event = JSON.parse(new TextDecoder().decode(input.Payload)) as ToolEvent;
    const result = await byFunction[input.FunctionName]!(event.arguments ?? {}, toolCallOf(event));
    return { StatusCode: 200, Payload: new TextEncoder().encode(JSON.stringify(result)) };
  });
  const invoker = new LambdaToolInvoker({ client: new LambdaClient({ region: 'us-east-1' }), functionNames: functions, deadline: () => undefined });
  return {
    invoker,
    sql: store.sql,
    close: async () => {
      service.restore();
      await store.sql.close();
    },
  };
});
