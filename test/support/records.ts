/**
 * Guidance records for tests that pass every quality gate
 * (`lambdas/records/quality-gates.ts`): an authoritative source with a checkable
 * excerpt, a recent review, a licence, a known technology with a semver range. Their
 * wording comes from the slug, so two fixtures never read as duplicates of each
 * other and tests can approve several of them one after the other.
 */
import { createHash } from 'node:crypto';
import { validRecord } from '../../bin/bench/reviewed-records.mjs';

/** Distinct words to build each fixture's wording from. */
const WORDS = (
  'anchor basil cobalt dune ember fjord garnet harbor indigo juniper kelp lagoon meadow nickel onyx pebble quartz ' +
  'raven saffron tundra umber velvet willow xenon yarrow zephyr amber birch cedar delta elm fern glacier hazel iris ' +
  'jade kestrel lichen maple nectar orchid pine quill reed sage thistle ursa violet walnut yucca zinnia acorn bramble ' +
  'canyon driftwood estuary falcon geyser heron islet jasper knoll larch marsh nettle oriole prairie quarry ridge ' +
  'spruce thicket upland vale wren yew'
).split(' ');

function wordsFor(slug: string, count: number): string[] {
  const digest = createHash('sha256').update(slug).digest();
  const picked = new Set<string>();
  for (let i = 0; picked.size < count; i++) picked.add(WORDS[digest[i % digest.length]! % WORDS.length]! + (i >= digest.length ? String(i) : ''));
  return [...picked];
}


/** A record that passes every gate (the benchmarks' `validRecord`); `extra` replaces any field. */
export function reviewedRecord(slug: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const w = wordsFor(slug, 15);
  const record = validRecord({
    slug,
    title: `Guard ${w[0]} ${w[1]} ${w[2]} jobs`,
    summary: `${w[3]} ${w[4]} ${w[5]} stalls when the ${w[6]} service never answers.`,
    // Each names the slug, so no two fixtures ever ask alike (the duplicates gate refuses that).
    asked_as: [`${slug} ${w[12]} hangs forever`, `should ${slug} ${w[13]} calls time out`, `${w[14]} ${slug} never answers`],
    recommendation: `Put a deadline on every ${w[7]} ${w[8]} call the ${w[9]} ${w[10]} ${w[11]} worker makes.`,
  });
  return { ...record, ...extra };
}
