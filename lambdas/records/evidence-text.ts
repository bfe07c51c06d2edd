/**
 * Whether a page still says what a record quotes from it: the page's text
 * (HTML, Markdown or plain text), one normaliser for page and excerpt, and the
 * search for an excerpt, or for the passage closest to it when it is gone.
 *
 * The normaliser forgives what a faithful quote may differ in (case, runs of
 * whitespace, curly against straight quotes, dash styles, soft hyphens and
 * zero-width characters, the markup around the words), nothing else. An excerpt
 * may join fragments of one page with "…" (or "..."); each must be found, in order.
 */
import { createHash } from 'node:crypto';
import { marked } from 'marked';
import { parse } from 'node-html-parser';

/** Media types whose text can be checked. */
export const TEXT_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml', 'text/markdown', 'text/x-markdown', 'text/plain']);

/** Elements whose text is never part of what a page says. */
const NOT_TEXT = 'script, style, noscript, template, svg, head';

/** The readable text of a page body of the given media type. */
export function pageText(body: string, mediaType: string): string {
  if (mediaType === 'text/plain') return body;
  const html = mediaType === 'text/markdown' || mediaType === 'text/x-markdown' ? (marked.parse(body, { async: false }) as string) : body;
  const root = parse(html, { blockTextElements: { script: false, style: false, noscript: false, pre: true } });
  for (const element of root.querySelectorAll(NOT_TEXT)) element.remove();
  return root.structuredText;
}

/** The comparable form of a text: what a faithful quote may differ in is removed. */
export function normalizeEvidence(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[\u00ad\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/[\u2018\u2019\u201a\u201b\u2032`´]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f\u2033«»]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/\*\*|__|(?<=\s|^)[*_](?=\S)|(?<=\S)[*_](?=\s|$|[.,;:!?])/g, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** An excerpt's fragments ("…" or "..." between them), normalised, empty ones dropped. */
export function excerptFragments(excerpt: string): string[] {
  return excerpt
    .split(/\s*(?:\u2026|\.\.\.|\[(?:\u2026|\.\.\.)\])\s*/)
    .map(normalizeEvidence)
    .filter((fragment) => fragment.length > 0);
}

/** A keyed digest of an excerpt's comparable form: which quote a check was made for. */
export function excerptHash(excerpt: string): string {
  return createHash('sha256').update(excerptFragments(excerpt).join('\u2026')).digest('hex');
}

/** A digest of a page's comparable text: whether it changed since the last check. */
export function textHash(normalizedText: string): string {
  return createHash('sha256').update(normalizedText).digest('hex');
}

export interface ExcerptMatch {
  readonly found: boolean;
  /** When not found: the page passage most like the excerpt (normalised words), and how alike, 0..1. */
  readonly closest?: string;
  readonly similarity?: number;
}

/** Looks for every fragment of `excerpt`, in order, in the normalised page text. */
export function findExcerpt(normalizedPage: string, excerpt: string): ExcerptMatch {
  const fragments = excerptFragments(excerpt);
  let from = 0;
  let found = fragments.length > 0;
  for (const fragment of fragments) {
    const at = normalizedPage.indexOf(fragment, from);
    if (at < 0) {
      found = false;
      break;
    }
    from = at + fragment.length;
  }
  if (found) return { found: true };
  return { found: false, ...closestPassage(normalizedPage, fragments.join(' ')) };
}

/**
 * The window of the page, as many words long as the excerpt, sharing the most
 * words with it (counted with multiplicity), found in one pass with running
 * counts; similarity is the shared fraction of the excerpt's words.
 */
function closestPassage(normalizedPage: string, normalizedExcerpt: string): { closest: string; similarity: number } {
  const page = normalizedPage.split(' ').filter(Boolean);
  const wanted = new Map<string, number>();
  const excerptWords = normalizedExcerpt.split(' ').filter(Boolean);
  for (const word of excerptWords) wanted.set(word, (wanted.get(word) ?? 0) + 1);
  const size = Math.min(excerptWords.length, page.length);
  if (size === 0) return { closest: '', similarity: 0 };
  const seen = new Map<string, number>();
  let shared = 0;
  const add = (word: string, step: 1 | -1) => {
    const before = seen.get(word) ?? 0;
    const after = before + step;
    seen.set(word, after);
    const limit = wanted.get(word) ?? 0;
    shared += Math.min(after, limit) - Math.min(before, limit);
  };
  for (let i = 0; i < size; i++) add(page[i]!, 1);
  let best = { shared, start: 0 };
  for (let start = 1; start + size <= page.length; start++) {
    add(page[start - 1]!, -1);
    add(page[start + size - 1]!, 1);
    if (shared > best.shared) best = { shared, start };
  }
  return { closest: page.slice(best.start, best.start + size).join(' '), similarity: Math.round((best.shared / excerptWords.length) * 100) / 100 };
}
