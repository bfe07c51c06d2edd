/**
 * BedrockReranker against a mocked Agents for Amazon Bedrock runtime (the SDK
 * boundary): the Rerank request it sends, scores mapped back to the documents by
 * index, and every failure (SDK error, deadline, a response that does not score each
 * document once) as an outcome instead of a throw. Also the settings that build it
 * on Lambda.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { BedrockAgentRuntimeClient, RerankCommand, ThrottlingException, type RerankCommandOutput } from '@aws-sdk/client-bedrock-agent-runtime';
import { BedrockReranker, foundationModelArn } from '../../lambdas/embeddings/bedrock-reranker.ts';
import { lambdaRerankStep } from '../../lambdas/aws/aws-adapters.ts';
import { ConfigError, SETTINGS, readSetting } from '../../lambdas/config/settings.ts';

const agentRuntime = mockClient(BedrockAgentRuntimeClient);

afterEach(() => {
  agentRuntime.reset();
});

const COHERE = 'cohere.rerank-v3-5:0';
const client = () => new BedrockAgentRuntimeClient({ region: 'us-west-2' });
const response = (results: { index: number; relevanceScore: number }[]): RerankCommandOutput => ({ results, $metadata: {} });

describe('BedrockReranker', () => {
  it('sends one Rerank request naming the model ARN and asking for a score per document', async () => {
    // Prepare
    agentRuntime.on(RerankCommand).resolves(response([{ index: 0, relevanceScore: 0.5 }, { index: 1, relevanceScore: 0.4 }]));
    const reranker = new BedrockReranker({ modelId: COHERE, client: client() });

    // Act
    await reranker.rerank('stable keys for React lists', ['Use stable keys.', 'Hash passwords.'], { deadlineMs: 1000 });

    // Assess
    const calls = agentRuntime.commandCalls(RerankCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: 'stable keys for React lists' } }],
      sources: [
        { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'Use stable keys.' } } },
        { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'Hash passwords.' } } },
      ],
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: 2,
          modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0' },
        },
      },
    });
    expect(reranker).toMatchObject({ provider: 'bedrock', model: COHERE });
  });

  it('maps the scores, which come back best first, to the documents by their index', async () => {
    // Prepare
    agentRuntime.on(RerankCommand).resolves(
      response([
        { index: 2, relevanceScore: 0.91 },
        { index: 0, relevanceScore: 0.42 },
        { index: 1, relevanceScore: 0.03 },
      ]),
    );
    const reranker = new BedrockReranker({ modelId: COHERE, client: client() });

    // Act
    const outcome = await reranker.rerank('query', ['first', 'second', 'third'], { deadlineMs: 1000 });

    // Assess
    expect(outcome).toEqual({ ok: true, scores: [0.42, 0.03, 0.91] });
  });

  it('makes no call for no documents', async () => {
    const reranker = new BedrockReranker({ modelId: COHERE, client: client() });
    expect(await reranker.rerank('query', [], { deadlineMs: 1000 })).toEqual({ ok: true, scores: [] });
    expect(agentRuntime.commandCalls(RerankCommand)).toHaveLength(0);
  });

  it('turns an SDK error into a failure that names the error and never quotes its message', async () => {
    // Prepare
    agentRuntime.on(RerankCommand).rejects(new ThrottlingException({ message: 'slow down for query secret-question', $metadata: { httpStatusCode: 429 } }));
    const reranker = new BedrockReranker({ modelId: COHERE, client: client() });

    // Act
    const outcome = await reranker.rerank('secret-question', ['a document'], { deadlineMs: 1000 });

    // Assess
    expect(outcome).toEqual({ ok: false, failure: 'error', error: 'ThrottlingException' });
    expect(JSON.stringify(outcome)).not.toContain('secret-question');
  });

  it('gives up at the deadline with a timeout, and aborts the call it gave up on', async () => {
    // Prepare
    agentRuntime.on(RerankCommand).callsFake(async () => {
      // Far past the deadline: had the reranker waited for it, the outcome would be ok.
      await new Promise((resolve) => setTimeout(resolve, 30_000).unref());
      return response([{ index: 0, relevanceScore: 0.9 }]);
    });
    const reranker = new BedrockReranker({ modelId: COHERE, client: client() });

    // Act
    const outcome = await reranker.rerank('query', ['a document'], { deadlineMs: 40 });

    // Assess
    expect(outcome).toEqual({ ok: false, failure: 'timeout' });
    // The mock's typings name only the command; the SDK's send also took the options with the abort signal.
    const options = (agentRuntime.commandCalls(RerankCommand)[0]!.args as unknown[])[1] as { abortSignal?: AbortSignal } | undefined;
    expect(options?.abortSignal?.aborted).toBe(true);
  });

  it.each([
    ['a document left unscored', [{ index: 0, relevanceScore: 0.5 }], 'IncompleteRerankResponse'],
    ['an index out of range', [{ index: 0, relevanceScore: 0.5 }, { index: 2, relevanceScore: 0.4 }], 'MalformedRerankResponse'],
    ['a document scored twice', [{ index: 0, relevanceScore: 0.5 }, { index: 0, relevanceScore: 0.4 }], 'MalformedRerankResponse'],
    ['a score that is not a number', [{ index: 0, relevanceScore: Number.NaN }, { index: 1, relevanceScore: 0.4 }], 'MalformedRerankResponse'],
  ])('refuses a response with %s', async (_case, results, error) => {
    agentRuntime.on(RerankCommand).resolves(response(results));
    const reranker = new BedrockReranker({ modelId: COHERE, client: client() });
    expect(await reranker.rerank('query', ['one', 'two'], { deadlineMs: 1000 })).toEqual({ ok: false, failure: 'error', error });
  });

  it('names the model by its ARN in the partition of the region', () => {
    expect(foundationModelArn('us-east-1', 'amazon.rerank-v1:0')).toBe('arn:aws:bedrock:us-east-1::foundation-model/amazon.rerank-v1:0');
    expect(foundationModelArn('cn-north-1', COHERE)).toBe('arn:aws-cn:bedrock:cn-north-1::foundation-model/cohere.rerank-v3-5:0');
    expect(foundationModelArn('us-gov-west-1', COHERE)).toBe('arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/cohere.rerank-v3-5:0');
  });
});

describe('the reranker settings on Lambda', () => {
  it('build no rerank step by default or with none', () => {
    expect(lambdaRerankStep({})).toEqual({});
    expect(lambdaRerankStep({ [SETTINGS.reranker.env]: 'None' })).toEqual({});
  });

  it('build a Bedrock reranker with the deadline and candidate count the settings give', () => {
    const step = lambdaRerankStep({ [SETTINGS.reranker.env]: ' cohere.rerank-v3-5:0 ', [SETTINGS.rerankTimeoutMs.env]: '800' });
    expect(step.reranker).toBeInstanceOf(BedrockReranker);
    expect(step.reranker?.model).toBe(COHERE);
    expect(step).toMatchObject({ rerankTimeoutMs: 800, rerankCandidates: 20 });
  });

  it.each([
    ['an embedding model', 'amazon.titan-embed-text-v2:0'],
    ['a word that is not a model id', 'cohere'],
    ['an ARN instead of a model id', 'arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0'],
  ])('refuse %s with a ConfigError naming the variable', (_case, raw) => {
    const read = () => readSetting({ [SETTINGS.reranker.env]: raw }, 'reranker');
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/CHATCTX_RERANKER must be none or a Bedrock reranker model id/);
  });

  it('bound the deadline and the candidates', () => {
    expect(() => readSetting({ [SETTINGS.rerankCandidates.env]: '101' }, 'rerankCandidates')).toThrow(/from 1 to 100/);
    expect(() => readSetting({ [SETTINGS.rerankTimeoutMs.env]: '50' }, 'rerankTimeoutMs')).toThrow(/from 100 to 10000/);
  });
});
