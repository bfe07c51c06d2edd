/**
 * Generated guidance records that pass every quality gate
 * (`lambdas/records/quality-gates.ts`), for benchmarks that import through the
 * approval path: an authoritative source whose excerpt the file declares checked, a
 * review dated today, a licence, a known technology with a semver range, and
 * three `asked_as` phrasings. Titles, phrasings and text are made-up words hashed
 * from the slug and name it, so no two generated records read as duplicates of each
 * other or share a phrasing (the duplicates gate refuses both), and every run
 * imports the same text. Plain JavaScript, so `load.mjs` runs it without a loader.
 */
import { createHash } from 'node:crypto';

const SYLLABLES = ['ka', 'lo', 'mi', 'ter', 'van', 'sul', 'dre', 'pon', 'qui', 'rast', 'bel', 'nor', 'fex', 'tam', 'gri', 'hol'];

/** `n` (at most 10) made-up words from a hash of `key`: text no real record shares, the same on every run. */
function phrase(key, n) {
  const d = createHash('sha256').update(key).digest();
  return Array.from({ length: n }, (_, j) => SYLLABLES[d[3 * j] % 16] + SYLLABLES[d[3 * j + 1] % 16] + SYLLABLES[d[3 * j + 2] % 16]).join(' ');
}

/**
 * A record file that passes every gate, around the wording that makes it itself:
 * the fields a gate checks (topic, technology and range, confidence, review date,
 * licence, a source whose excerpt is declared checked) are the same for every
 * generated record, here and in the tests' fixtures (`test/support/records.ts`).
 * @param {{ slug: string, title: string, summary: string, asked_as: string[], recommendation: string }} wording
 */
export function validRecord(wording) {
  const today = new Date().toISOString().slice(0, 10);
  return {
    slug: wording.slug,
    title: wording.title,
    topic: 'reliability',
    task_types: ['build'],
    summary: wording.summary,
    asked_as: wording.asked_as,
    recommendation: wording.recommendation,
    applies_to: [{ kind: 'runtime', name: 'Node.js', version_constraint: '>=18' }],
    confidence: 'medium',
    reviewed_at: today,
    license: 'CC-BY-4.0',
    sources: [
      {
        title: 'Timers',
        url: 'https://nodejs.org/api/timers.html',
        evidence_excerpt: 'The timer functions within Node.js implement a similar API as the timers API provided by Web Browsers',
        relation: 'supports',
        // Declared checked, so the evidence gate passes without fetching the page once per record.
        verified_at: today,
        verified_from: { page: 'https://nodejs.org/api/timers.html' },
      },
    ],
  };
}

/**
 * `count` record files (plain objects, as in a JSON file) with slugs `${prefix}-${i}`.
 * @param {number} count
 * @param {string} prefix
 */
export function reviewedRecords(count, prefix) {
  return Array.from({ length: count }, (_, i) => {
    const slug = `${prefix}-${i}`;
    return validRecord({
      slug,
      title: `Bound the ${phrase(`${slug}:1`, 3)} queue of ${slug}`,
      summary: `Workers of ${phrase(`${slug}:2`, 4)} stall when the ${phrase(`${slug}:3`, 2)} dependency never answers.`,
      asked_as: [`${slug} ${phrase(`${slug}:4`, 2)} hangs forever`, `should ${slug} ${phrase(`${slug}:5`, 2)} calls time out`, `${phrase(`${slug}:6`, 2)} ${slug} never answers`],
      recommendation: `Put a deadline on every ${phrase(`${slug}:7`, 3)} call and shed load when the ${phrase(`${slug}:8`, 2)} queue is full.`,
    });
  });
}
