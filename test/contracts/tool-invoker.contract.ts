/**
 * The `ToolInvoker` contract: whatever carries a `tools/call` to a tool (a call in
 * this process, or a Lambda Invoke), the endpoint gets the tool's own result back,
 * unchanged: the structured content and the same JSON as text, the error flag
 * for a tool error, and one stored row for a call delivered twice with the same
 * idempotency key. Both adapters run the same real tool handlers over PGlite with
 * the starter corpus.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ToolInvoker } from '../../lambdas/ports/tool-invoker.ts';
import type { Sql } from '../../lambdas/ports/sql.ts';
import { describeContract, type UnderTest } from './contract.ts';
import { createCollection } from '../../lambdas/records/collections.ts';
import { importRecords } from '../../lambdas/records/record-import.ts';
import { validateRecords } from '../../lambdas/records/record-files.ts';
import { GUEST_SCOPE } from '../../lambdas/auth/caller-scope.ts';

export interface ToolInvokerUnderTest extends UnderTest {
  readonly invoker: ToolInvoker;
  /** The store behind the tools, to count what they wrote. */
  readonly sql: Sql;
}

const APPROVED = 'hash-passwords-with-argon2id-or-bcrypt';

export function describeToolInvokerContract(adapter: string, open: () => Promise<ToolInvokerUnderTest>): void {
  describeContract('ToolInvoker', adapter, open, (subject) => {
    it("returns the tool's result: structured content, and the same JSON as text", async () => {
      const result = await subject().invoker.invoke({ name: 'get_guidance', arguments: { ids: [APPROVED] } });
      expect(result.isError ?? false).toBe(false);
      const answer = result.structuredContent as { results: { slug: string }[]; missing: string[] };
      expect(answer.results.map((r) => r.slug)).toEqual([APPROVED]);
      expect(answer.missing).toEqual([]);
      expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
    });

    it("returns a tool error as the tool's result with isError, not as a failure", async () => {
      const result = await subject().invoker.invoke({ name: 'search_knowledge', arguments: { query: 'x' } });
      expect(result.isError).toBe(true);
      expect((result.structuredContent as { error: { code: string } }).error.code).toBe('validation_error');
      expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
    });

    it('refuses a tool it does not know, before anything runs', async () => {
      await expect(subject().invoker.invoke({ name: 'drop_tables', arguments: {} })).rejects.toThrow(/drop_tables/);
    });

    it('carries the idempotency key: a call delivered twice stores one row', async () => {
      const count = async () => Number((await subject().sql.query<{ n: number }>('SELECT count(*)::int AS n FROM feedback'))[0]!.n);
      const before = await count();
      const call = { name: 'submit_feedback', arguments: { record: APPROVED, category: 'helpful' }, idempotencyKey: randomUUID() };
      const first = await subject().invoker.invoke(call);
      const second = await subject().invoker.invoke(call);
      expect(first.isError ?? false).toBe(false);
      expect(second.structuredContent).toEqual(first.structuredContent);
      expect(await count()).toBe(before + 1);
    });

    it("carries the caller's scope: a record outside its collections is missing, inside it is found; no feedback scope, nothing stored", async () => {
      const { sql, invoker } = subject();
      const { id } = await createCollection(sql, 'internal', 'team decisions');
      const slug = 'our-services-use-the-shared-retry-client';
      const records = await validateRecords(
        [
          {
            slug,
            title: 'Our services use the shared retry client',
            topic: 'reliability',
            recommendation: 'Call other services through the shared retry client rather than writing retry loops.',
            confidence: 'high',
            sources: [{ title: 'Platform handbook', url: 'https://handbook.example.com/retries' }],
          },
        ],
        () => slug,
      );
      await importRecords(sql, records, { approve: true, collection: 'internal' });
      const ask = (scope?: typeof GUEST_SCOPE) => invoker.invoke({ name: 'get_guidance', arguments: { ids: [slug] }, scope });
      const answer = (result: Awaited<ReturnType<typeof ask>>) => result.structuredContent as { results: { slug: string }[]; missing: string[] };
      expect(answer(await ask()).missing).toEqual([slug]);
      expect(answer(await ask(GUEST_SCOPE)).missing).toEqual([slug]);
      expect(answer(await ask({ collections: [1, id], feedback: true })).results.map((r) => r.slug)).toEqual([slug]);

      const count = async () => Number((await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM feedback'))[0]!.n);
      const before = await count();
      const refused = await invoker.invoke({ name: 'submit_feedback', arguments: { category: 'helpful' }, scope: { collections: [1], feedback: false } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: { code: 'validation_error', details: { issues: [{ code: 'feedback_not_in_scope' }] } } });
      expect(await count()).toBe(before);
    });
  });
}
