/**
 * The wrapper every Lambda entry uses: a failure that escapes the handler is
 * logged (and so counted in the request-path failure metric) before it reaches
 * Lambda unchanged, and an invocation that recorded no metric publishes nothing,
 * not even Powertools' "no metrics" warning.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Context } from 'aws-lambda';
import { lambdaEntry } from '../../lambdas/aws/lambda-entry.ts';
import { REQUEST_PATH_FAILURE_METRIC } from '../../lambdas/observability/metric-names.ts';

const CONTEXT = { functionName: 'fn', awsRequestId: 'req', getRemainingTimeInMillis: () => 5_000 } as unknown as Context;

afterEach(() => {
  vi.restoreAllMocks();
});

/** Everything written to stdout and stderr while `run` runs. */
async function written(run: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const capture = (chunk: string | Uint8Array) => (lines.push(String(chunk)), true);
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  for (const method of ['log', 'info', 'warn', 'error'] as const) vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  await run().catch(() => undefined);
  vi.restoreAllMocks();
  return lines.join('\n');
}

describe('lambdaEntry', () => {
  it('lets a failure reach Lambda unchanged after counting it, without its message', async () => {
    const entry = lambdaEntry('chatctx-test', () => async () => Promise.reject(new TypeError('details that must not be logged')), {
      requestPath: true,
      env: { CHATCTX_STACK_NAME: 'Chatctx' },
    });
    await expect(entry({}, CONTEXT)).rejects.toThrow('details that must not be logged');
    const out = await written(() => entry({}, CONTEXT));
    expect(out).toContain(REQUEST_PATH_FAILURE_METRIC);
    expect(out).not.toContain('details that must not be logged');
  });

  it('publishes nothing, and warns of nothing, for an invocation without metrics', async () => {
    const entry = lambdaEntry('chatctx-test', () => async (event: { n: number }) => event.n + 1);
    let answer: number | undefined;
    const out = await written(async () => {
      answer = await entry({ n: 1 }, CONTEXT);
    });
    expect(answer).toBe(2);
    expect(out).not.toContain('No application metrics');
    expect(out).not.toContain('_aws');
  });
});
