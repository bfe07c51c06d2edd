/**
 * The scheduled source check on the AWS runtime, offline: records in the store
 * behind the Data API adapter (PGlite behind a Data-API-compatible endpoint),
 * their pages on a local HTTPS server that made-up names resolve to, and SNS
 * mocked at the SDK client. A run stores every result and publishes one summary
 * naming what drifted or broke; a clean run publishes nothing. The Lambda entry
 * itself, with its default fetcher, refuses the fixture's loopback address before
 * connecting and reports every source as unreachable.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { Context } from 'aws-lambda';
import { startAwsBackends, type AwsBackends } from '../support/aws-backends.ts';
import { startTlsServer, type TlsServer } from '../support/tls-server.ts';
import { reviewedRecord } from '../support/records.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { recordFileSchema } from '../../lambdas/records/record-schema.ts';
import { runSourceCheckJob } from '../../lambdas/aws/source-check-job.ts';
import { dataApiSql, sourceCheckPublisher } from '../../lambdas/aws/aws-adapters.ts';
import { UntrustedFetcher } from '../../lambdas/streams/untrusted-fetch.ts';
import { createLogger } from '../../lambdas/observability/logger.ts';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:chatctx-alarms';
const HOST = 'docs.example.test';
const SENTENCE = 'Give every outbound call a deadline, and treat reaching it as an ordinary failure.';
const sns = mockClient(SNSClient);
let backends: AwsBackends;
let tls: TlsServer;
let rewritten = true;
const context = { functionName: 'source-checks', awsRequestId: 'req', getRemainingTimeInMillis: () => 900_000 } as unknown as Context;

beforeAll(async () => {
  tls = await startTlsServer([HOST], (req, res) => {
    const html = { 'content-type': 'text/html' };
    if (req.url === '/kept') return void res.writeHead(200, html).end(`<main><p>${SENTENCE}</p></main>`);
    if (req.url === '/rewritten') return void res.writeHead(200, html).end(rewritten ? '<main><p>Every outbound call needs a deadline of its own.</p></main>' : `<main><p>${SENTENCE}</p></main>`);
    res.writeHead(404).end();
  });
  backends = await startAwsBackends({ embeddings: 'none', sourceCheckTopicArn: TOPIC });
  const record = (slug: string, path: string) => recordAt(slug, `https://${HOST}:${tls.port}${path}`);
  await importRecords(backends.sql, [record('deadline-kept', '/kept'), record('deadline-rewritten', '/rewritten')], { approve: true });
}, 300_000);

beforeEach(() => {
  sns.reset();
  sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
});

afterAll(async () => {
  sns.restore();
  await backends?.close();
  await tls?.close();
});

function recordAt(slug: string, url: string) {
  return recordFileSchema.parse(reviewedRecord(slug, { sources: [{ title: 'Deadlines', url, publisher: 'Example Docs', evidence_excerpt: SENTENCE, relation: 'supports' }] }));
}

const lines: string[] = [];
const job = () =>
  runSourceCheckJob({
    sql: dataApiSql(process.env),
    fetcher: new UntrustedFetcher({ resolve: async () => ['127.0.0.1'], allowAddress: () => true, ca: tls.cert }),
    publish: sourceCheckPublisher(process.env),
    logger: createLogger((line) => lines.push(line)),
    limits: { deadlineMs: 15_000, maxBytes: 1024 * 1024 },
  });
const stored = () => backends.sql.query<{ url: string; status: string }>('SELECT url, status FROM source_checks ORDER BY id');

describe('the scheduled source check', () => {
  it('stores each result and publishes one summary naming the drifted record', async () => {
    const summary = await job();
    expect(summary).toMatchObject({ checked: 2, verified: 1, notified: true });
    expect((await stored()).map((r) => r.status).sort()).toEqual(['drifted', 'verified']);
    const published = sns.commandCalls(PublishCommand);
    expect(published).toHaveLength(1);
    const input = published[0]!.args[0].input;
    expect(input.TopicArn).toBe(TOPIC);
    expect(input.Subject).toBe('chatctx: 1 of 2 quoted sources drifted or could not be read');
    expect(input.Message).toMatch(/- deadline-rewritten: https:\/\/docs\.example\.test:\d+\/rewritten drifted \(closest passage \d+% alike\)/);
    expect(input.Message).not.toContain('deadline-kept');
    expect(lines.some((line) => line.includes('"event":"source_checks_done"') && line.includes('"problems":1'))).toBe(true);
  });

  it('publishes nothing when every excerpt is on its page', async () => {
    rewritten = false;
    try {
      expect(await job()).toMatchObject({ checked: 2, verified: 2, notified: false });
      expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
    } finally {
      rewritten = true;
    }
  });

  it('as the Lambda entry runs it, fetches public addresses only: a name resolving to loopback is refused and reported', async () => {
    // `localhost` resolves to loopback through the system resolver the entry uses; the made-up names do not resolve at all.
    await importRecords(backends.sql, [recordAt('deadline-local', `https://localhost:${tls.port}/kept`)], { approve: true });
    const before = (await stored()).length;
    const { handler } = await import('../../lambdas/handlers/source-checks.ts');
    const summary = (await handler({}, context)) as Awaited<ReturnType<typeof runSourceCheckJob>>;
    expect(summary).toMatchObject({ checked: 3, verified: 0, notified: true });
    expect(summary.problems.find((p) => p.slugs.includes('deadline-local'))).toMatchObject({ status: 'unreachable', detail: expect.stringMatching(/not public/) });
    expect(summary.problems.filter((p) => !p.slugs.includes('deadline-local')).map((p) => p.detail)).toEqual(['the host name does not resolve', 'the host name does not resolve']);
    expect((await stored()).length).toBe(before + 3);
    expect(sns.commandCalls(PublishCommand)[0]!.args[0].input.Message).toMatch(/deadline-local: .* unreachable: refused: the host resolves to an address that is not public/);
  });
});
