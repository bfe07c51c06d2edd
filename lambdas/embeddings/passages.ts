/**
 * Splits a record into short, overlapping passages for embedding.
 *
 * Why: USE-lite reads only about the first 128 tokens of a text and ignores the
 * rest, so a whole record embedded as one text would be represented by its
 * opening lines alone. Windows of at most 90 words (roughly 120 tokens of
 * English) keep every passage inside that limit; starting a window every 70
 * words makes neighbouring passages share about 20 words, so a sentence cut at
 * one window's edge appears whole in the next. Each passage starts with the
 * record's title, which anchors an otherwise context-free fragment to its
 * subject. The title counts toward the word budget, and is cut to 20 words so
 * that it can never crowd out the body.
 */
import { positiveInteger } from '../errors/argument-checks.ts';

export const MAX_TITLE_WORDS = 20;

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** Joins sentences or fragments, adding '. ' unless a part already ends in punctuation. */
function joinParts(parts: readonly string[]): string {
  let joined = '';
  for (const raw of parts) {
    const part = raw.trim();
    if (part === '') continue;
    if (joined === '') joined = part;
    else joined += (/[.!?:;]$/.test(joined) ? ' ' : '. ') + part;
  }
  return joined;
}

/**
 * Word windows over `parts.body`, each prefixed with the title (at most 20 of its
 * words). A window holds at most `maxWords` words, title included; windows start
 * `stride` words apart (never more than a window's body length, so no word is
 * skipped). A record whose body fits in one window yields one passage; a record
 * with neither title nor body yields none.
 */
export function recordPassages(parts: { title: string; body: string[] }, maxWords = 90, stride = 70): string[] {
  positiveInteger('maxWords', maxWords);
  positiveInteger('stride', stride);

  const titleWords = words(parts.title).slice(0, MAX_TITLE_WORDS);
  const bodyWords = words(joinParts(parts.body));
  if (bodyWords.length === 0) {
    return titleWords.length === 0 ? [] : [titleWords.slice(0, maxWords).join(' ')];
  }

  // Leave at least one body word per window, even under a tiny budget.
  const kept = titleWords.slice(0, Math.min(titleWords.length, maxWords - 1));
  const titleText = kept.join(' ');
  const prefix = titleText === '' ? '' : titleText + (/[.!?:;]$/.test(titleText) ? ' ' : '. ');
  const window = maxWords - kept.length;
  const step = Math.min(stride, window);

  const passages: string[] = [];
  for (let start = 0; ; start += step) {
    passages.push(prefix + bodyWords.slice(start, start + window).join(' '));
    if (start + window >= bodyWords.length) break;
  }
  return passages;
}
