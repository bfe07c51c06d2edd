/**
 * LambdaToolInvoker against a mocked Lambda: the request each tool call becomes,
 * the decoded result, and failures that reach the caller only as a generic
 * internal tool error (never the function's error text).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { InvokeCommand, LambdaClient, type InvokeCommandOutput } from '@aws-sdk/client-lambda';
import { LambdaToolInvoker } from '../../lambdas/aws/lambda-tool-invoker.ts';
import { toolFunctionNames } from '../../lambdas/aws/aws-adapters.ts';
import { ConfigError, SETTINGS } from '../../lambdas/config/settings.ts';
import { toolError, toolSuccess } from '../../lambdas/tools/tool-result.ts';
import type { ToolCallResult } from '../../lambdas/ports/tool-invoker.ts';
import { UnavailableError, ValidationError } from '../../lambdas/errors/app-error.ts';
import { INVOKE_RETURN_MS } from '../../lambdas/aws/invocation-deadline.ts';
import { FakeClock } from '../support/paused-cluster.ts';

const lambda = mockClient(LambdaClient);

afterEach(() => {
  lambda.reset();
});

const FUNCTION_NAMES = {
  search_knowledge: 'chatctx-search-knowledge',
  get_guidance: 'chatctx-get-guidance',
  submit_feedback: 'chatctx-submit-feedback',
};
const GENERIC = 'The tool could not be reached. Try again later.';

function invoker(logs: string[] = []): LambdaToolInvoker {
  const logger = {
    info: () => {},
    warn: () => {},
    error: (event: string, fields?: object) => logs.push(JSON.stringify({ event, ...fields })),
  };
  return new LambdaToolInvoker({ client: new LambdaClient({ region: 'us-east-1' }), functionNames: FUNCTION_NAMES, logger });
}

function payload(value: unknown): InvokeCommandOutput['Payload'] {
  return new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value)) as InvokeCommandOutput['Payload'];
}

function expectGenericInternal(result: ToolCallResult): void {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toEqual({ error: { code: 'internal', message: GENERIC, details: {} } });
  expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
}

describe('LambdaToolInvoker', () => {
  it("invokes the tool's function synchronously with {arguments} and returns its decoded result", async () => {
    // Prepare
    const expected = toolSuccess({ mode: 'results', results: [{ slug: 'react-list-keys' }] });
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(expected) });
    const args = { query: 'stable keys for React lists', technologies: ['react'] };

    // Act
    const result = await invoker().invoke({ name: 'search_knowledge', arguments: args });

    // Assess
    const calls = lambda.commandCalls(InvokeCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input.FunctionName).toBe('chatctx-search-knowledge');
    expect(input.InvocationType).toBe('RequestResponse');
    expect(JSON.parse(new TextDecoder().decode(input.Payload as Uint8Array))).toEqual({ arguments: args });
    expect(result).toEqual(expected);
  });

  it("sends the caller's scope with the arguments, and nothing about who the caller is", async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(toolSuccess({ results: [], missing: [] })) });
    await invoker().invoke({ name: 'get_guidance', arguments: { ids: ['x'] }, scope: { collections: [1, 4], feedback: false } });
    const sent = JSON.parse(new TextDecoder().decode(lambda.commandCalls(InvokeCommand)[0]!.args[0].input.Payload as Uint8Array));
    expect(sent).toEqual({ arguments: { ids: ['x'] }, scope: { collections: [1, 4], feedback: false } });
  });

  it('routes each tool to its own function', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(toolSuccess({ ok: true })) });
    await invoker().invoke({ name: 'get_guidance', arguments: { slugs: ['a'] } });
    await invoker().invoke({ name: 'submit_feedback', arguments: {} });
    expect(lambda.commandCalls(InvokeCommand).map((call) => call.args[0].input.FunctionName)).toEqual([
      'chatctx-get-guidance',
      'chatctx-submit-feedback',
    ]);
  });

  it("passes a tool's own error result through unchanged", async () => {
    const expected = toolError(new ValidationError('Invalid arguments. See details.issues for each problem.', { issues: [] }));
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(expected) });
    const result = await invoker().invoke({ name: 'get_guidance', arguments: { slugs: ['missing'] } });
    expect(result).toEqual(expected);
  });

  it('turns a FunctionError into a generic internal tool error without the function error text', async () => {
    // Prepare
    const crash = { errorType: 'TypeError', errorMessage: 'Cannot read secret query "my private text"', trace: ['at handler'] };
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, FunctionError: 'Unhandled', Payload: payload(crash) });
    const logs: string[] = [];

    // Act
    const result = await invoker(logs).invoke({ name: 'search_knowledge', arguments: { query: 'my private text' } });

    // Assess
    expectGenericInternal(result);
    expect(JSON.stringify(result)).not.toContain('Cannot read');
    expect(JSON.stringify(result)).not.toContain('my private text');
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('function_error');
    expect(logs[0]).not.toContain('my private text');
  });

  it('turns an SDK rejection into the same generic internal tool error', async () => {
    lambda.on(InvokeCommand).rejects(new Error('connect ETIMEDOUT lambda.us-east-1.amazonaws.com'));
    const result = await invoker().invoke({ name: 'submit_feedback', arguments: { comment: 'hi' } });
    expectGenericInternal(result);
    expect(JSON.stringify(result)).not.toContain('ETIMEDOUT');
  });

  it('turns an unparseable or non-result payload into the generic internal tool error', async () => {
    lambda
      .on(InvokeCommand)
      .resolvesOnce({ StatusCode: 200, Payload: payload('not json at all') })
      .resolvesOnce({ StatusCode: 200, Payload: payload({ hello: 'world' }) })
      .resolvesOnce({ StatusCode: 200 });
    for (let i = 0; i < 3; i += 1) {
      expectGenericInternal(await invoker().invoke({ name: 'get_guidance', arguments: {} }));
    }
  });

  it('throws for a tool it has no function for, without invoking anything', async () => {
    await expect(invoker().invoke({ name: 'drop_tables', arguments: {} })).rejects.toThrow(/No Lambda function/);
    await expect(invoker().invoke({ name: 'toString', arguments: {} })).rejects.toThrow(/No Lambda function/);
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(0);
  });
});

describe("LambdaToolInvoker and the gateway's deadline", () => {
  const unavailable = toolError(new UnavailableError(10, 'The database is resuming after a pause'));
  const withDeadline = (clock: FakeClock, deadline: number) =>
    new LambdaToolInvoker({ client: new LambdaClient({ region: 'us-east-1' }), functionNames: FUNCTION_NAMES, clock, deadline: () => deadline });
  const sentDeadlines = () => lambda.commandCalls(InvokeCommand).map((call) => JSON.parse(new TextDecoder().decode(call.args[0].input.Payload as Uint8Array)).deadline_ms);

  it('sends the deadline, less the time the answer needs to come back', async () => {
    const clock = new FakeClock();
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(toolSuccess({ results: [] })) });
    await withDeadline(clock, clock.now() + 26_500).invoke({ name: 'get_guidance', arguments: { ids: ['x'] } });
    expect(sentDeadlines()).toEqual([clock.now() + 26_500 - INVOKE_RETURN_MS]);
  });

  it('invokes a tool again after unavailable while the deadline leaves time, then passes the last answer on', async () => {
    const clock = new FakeClock();
    const deadline = clock.now() + 26_500;
    // The tool spends its 19 s, answers unavailable; the second try runs into the gateway's deadline.
    lambda.on(InvokeCommand).callsFake(async () => {
      clock.advance(Math.min(19_000, deadline - INVOKE_RETURN_MS - clock.now()));
      return { StatusCode: 200, Payload: payload(unavailable) };
    });
    const result = await withDeadline(clock, deadline).invoke({ name: 'get_guidance', arguments: { ids: ['x'] } });
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(2);
    expect(result).toEqual(unavailable);
    expect(clock.now()).toBeLessThanOrEqual(deadline);
  });

  it('does not invoke again without a deadline, or for any other error', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(unavailable) });
    await invoker().invoke({ name: 'get_guidance', arguments: { ids: ['x'] } });
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(1);
    expect(sentDeadlines()).toEqual([undefined]);

    lambda.reset();
    const clock = new FakeClock();
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(toolError(new ValidationError('bad'))) });
    await withDeadline(clock, clock.now() + 26_500).invoke({ name: 'get_guidance', arguments: { ids: ['x'] } });
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(1);
  });
});

describe('toolFunctionNames', () => {
  it('reads the function of each tool from the settings the stack sets', () => {
    const env = {
      [SETTINGS.searchKnowledgeFunction.env]: 'fn-search',
      [SETTINGS.getGuidanceFunction.env]: 'fn-get',
      [SETTINGS.submitFeedbackFunction.env]: 'fn-feedback',
    };
    expect(toolFunctionNames(env)).toEqual({ search_knowledge: 'fn-search', get_guidance: 'fn-get', submit_feedback: 'fn-feedback' });
  });

  it('fails the cold start naming the missing variable', () => {
    const env = { [SETTINGS.searchKnowledgeFunction.env]: 'fn-search', [SETTINGS.submitFeedbackFunction.env]: 'fn-feedback' };
    expect(() => toolFunctionNames(env)).toThrow(ConfigError);
    expect(() => toolFunctionNames(env)).toThrow(SETTINGS.getGuidanceFunction.env);
  });
});
