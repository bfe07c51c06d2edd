/**
 * A caller's scope as the tools receive it: from the key's stored columns, or from
 * the payload the gateway sends a tool function. Whatever arrives, a tool gets a
 * well-formed scope, and anything unreadable sees no more than a guest does.
 */
import { describe, expect, it } from 'vitest';
import { GUEST_SCOPE, PUBLIC_COLLECTION_ID, callerScope, collectionsKey } from '../../lambdas/auth/caller-scope.ts';
import { toolCallOf } from '../../lambdas/aws/tool-lambda.ts';

describe('callerScope', () => {
  it('keeps collection ids ascending and once each, so one set of collections has one cache key', () => {
    const scope = callerScope([3, 1, 3, 2], true);
    expect(scope.collections).toEqual([1, 2, 3]);
    expect(collectionsKey(scope)).toBe(collectionsKey(callerScope([2, 3, 1], true)));
    expect(collectionsKey(scope)).not.toBe(collectionsKey(callerScope([1, 2], true)));
  });

  it('drops anything that is not a collection id, and reads a missing list as public only', () => {
    expect(callerScope([1, 'x', -2, 2.5, null, '4'], true).collections).toEqual([1, 4]);
    expect(callerScope(undefined, true).collections).toEqual([PUBLIC_COLLECTION_ID]);
    expect(callerScope('1,2', true).collections).toEqual([PUBLIC_COLLECTION_ID]);
  });

  it('takes the feedback scope away only when it is explicitly off', () => {
    expect(callerScope([1], false).feedback).toBe(false);
    expect(callerScope([1], undefined).feedback).toBe(true);
  });

  it('gives guests public and feedback, and cannot be widened by a caller', () => {
    expect(GUEST_SCOPE).toEqual({ collections: [PUBLIC_COLLECTION_ID], feedback: true });
    expect(() => (GUEST_SCOPE.collections as number[]).push(2)).toThrow();
  });
});

describe("a tool function's reading of the gateway's payload", () => {
  it('passes the scope the gateway sent', () => {
    expect(toolCallOf({ arguments: {}, scope: { collections: [2, 1], feedback: false } }).scope).toEqual({ collections: [1, 2], feedback: false });
  });

  it("answers an event without a scope (an older gateway) as a guest", () => {
    expect(toolCallOf({ arguments: {} }).scope).toEqual(GUEST_SCOPE);
    expect(toolCallOf(undefined).scope).toEqual(GUEST_SCOPE);
    expect(toolCallOf({ arguments: {}, scope: 'everything' }).scope).toEqual(GUEST_SCOPE);
  });
});
