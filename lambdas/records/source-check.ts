/**
 * One source checked against its page as the page reads now: fetched through
 * the untrusted fetcher (`streams/untrusted-fetch.ts`: public addresses only
 * unless the owner allows private ones, one deadline over every hop and the body,
 * a size cap), redirects followed on the same host (each hop checked like the
 * first), the text extracted and the excerpt looked for (`evidence-text.ts`).
 *
 * Statuses:
 * - `verified`: every fragment of the excerpt is on the page;
 * - `drifted`: the page was read and the excerpt is not on it (with the closest
 *   passage and how alike it is);
 * - `unreachable`: no answer, an error status, a deadline, or an address that may
 *   not be fetched (`detail` says which);
 * - `moved`: a redirect to another host (`detail` names it);
 * - `too_large`, `not_text`: the page could not be read as text within the cap.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { UntrustedFetchError, type UntrustedFetcher, type UntrustedResponse } from '../streams/untrusted-fetch.ts';
import { TEXT_TYPES, excerptHash, findExcerpt, normalizeEvidence, pageText, textHash } from './evidence-text.ts';

export const SOURCE_CHECK_STATUSES = ['verified', 'drifted', 'unreachable', 'moved', 'too_large', 'not_text'] as const;
export type SourceCheckStatus = (typeof SOURCE_CHECK_STATUSES)[number];

export interface SourceCheck {
  readonly url: string;
  readonly excerptHash: string;
  readonly status: SourceCheckStatus;
  /** Why it is not `verified`, in a few words (an HTTP status, where it moved, what refused it). */
  readonly detail?: string;
  /** Digest of the page's normalised text, when it was read. */
  readonly textHash?: string;
  /** When `drifted`: the page passage most like the excerpt, and how alike, 0..1. */
  readonly closest?: string;
  readonly similarity?: number;
  readonly checkedAt: Date;
}

export interface SourceCheckLimits {
  /** The whole check, every hop and the body, ends within this. */
  readonly deadlineMs: number;
  readonly maxBytes: number;
}

/** What the check needs of the untrusted fetcher; tests stand in their own. */
export type SourceFetcher = Pick<UntrustedFetcher, 'get'>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_HOPS = 5;
export const VERIFY_USER_AGENT = 'chatctx-source-check (checks that quoted evidence is still on the page)';

export async function checkSource(fetcher: SourceFetcher, source: { url: string; excerpt: string }, limits: SourceCheckLimits, now: () => Date = () => new Date()): Promise<SourceCheck> {
  const base = { url: source.url, excerptHash: excerptHash(source.excerpt) };
  const deadline = Date.now() + limits.deadlineMs;
  let url = new URL(source.url);
  for (let hop = 0; ; hop++) {
    let answer: UntrustedResponse;
    try {
      const left = deadline - Date.now();
      if (left <= 0) throw new UntrustedFetchError('deadline', 'out of time');
      answer = await fetcher.get(url.href, {
        deadlineMs: left,
        maxBytes: limits.maxBytes,
        headers: { accept: 'text/html, text/markdown;q=0.9, text/plain;q=0.8', 'user-agent': VERIFY_USER_AGENT },
        wantBody: (status, headers) => status >= 200 && status < 300 && TEXT_TYPES.has(mediaType(headers)),
      });
    } catch (error) {
      if (!(error instanceof UntrustedFetchError)) throw error;
      const status = error.kind === 'too_large' ? 'too_large' : 'unreachable';
      return { ...base, status, detail: fetchFailure(error), checkedAt: now() };
    }
    if (REDIRECTS.has(answer.status)) {
      const next = redirectTarget(answer, url);
      if (!next) return { ...base, status: 'unreachable', detail: `HTTP ${answer.status} without a usable Location`, checkedAt: now() };
      if (next.hostname !== url.hostname || next.protocol !== 'https:') return { ...base, status: 'moved', detail: next.href, checkedAt: now() };
      if (hop === MAX_HOPS) return { ...base, status: 'unreachable', detail: `more than ${MAX_HOPS} redirects`, checkedAt: now() };
      url = next;
      continue;
    }
    if (answer.status < 200 || answer.status > 299) return { ...base, status: 'unreachable', detail: `HTTP ${answer.status}`, checkedAt: now() };
    if (!answer.body) return { ...base, status: 'not_text', detail: mediaType(answer.headers) || 'no media type', checkedAt: now() };
    const page = normalizeEvidence(pageText(answer.body.toString('utf8'), mediaType(answer.headers)));
    const match = findExcerpt(page, source.excerpt);
    const read = { textHash: textHash(page), checkedAt: now() };
    if (match.found) return { ...base, status: 'verified', ...read };
    return { ...base, status: 'drifted', closest: match.closest, similarity: match.similarity, ...read };
  }
}

function mediaType(headers: IncomingHttpHeaders): string {
  return String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function redirectTarget(answer: UntrustedResponse, from: URL): URL | undefined {
  const location = answer.headers.location;
  if (!location) return undefined;
  try {
    return new URL(location, from);
  } catch {
    return undefined;
  }
}

function fetchFailure(error: UntrustedFetchError): string {
  switch (error.kind) {
    case 'deadline':
      return 'timed out';
    case 'forbidden_address':
      return 'refused: the host resolves to an address that is not public';
    case 'unresolvable':
      return 'the host name does not resolve';
    case 'not_https':
      return 'not an https address';
    case 'too_large':
      return 'larger than the size cap';
    default:
      return 'no answer';
  }
}
