/**
 * The starter corpus's evidence rule: every source of every record in `guidance/`
 * says when its excerpt was last found word for word and where that text was read
 * (the docs' repository and file, or the page), so no record ships with a quote
 * nobody checked. A new record without it fails here before it fails review.
 */
import { describe, expect, it } from 'vitest';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { STARTER_CORPUS_DIR } from '../../lambdas/local/local-store.ts';

describe('starter corpus evidence', () => {
  it('gives every source an excerpt, the day it was verified and where it was read', async () => {
    const records = await readRecordFiles(STARTER_CORPUS_DIR);
    expect(records.length).toBeGreaterThan(100);
    const unchecked = records.flatMap((r) =>
      r.sources.flatMap((s, i) => (s.evidence_excerpt && s.verified_at && s.verified_from ? [] : [`${r.slug} source ${i + 1}`])),
    );
    expect(unchecked).toEqual([]);
    const repositoryReads = records.flatMap((r) => r.sources).filter((s) => s.verified_from && 'repository' in s.verified_from);
    // Most were read in the docs' own repositories; the rest on the page's own host.
    expect(repositoryReads.length).toBeGreaterThan(records.flatMap((r) => r.sources).length / 2);
  });
});
