/**
 * Drafts a guidance-record file from one web page, for an owner to complete
 * (`chatctx records draft --from-url`). It fetches the page within a size and a
 * time limit, reads its title and publisher, and picks candidate evidence passages
 * from the main content; the owner writes the guidance itself. Nothing is
 * generated: every word in the draft was on the page, or is an empty field left
 * for the owner.
 *
 * Only https pages are read, redirects included, because a record's sources must
 * be https (`record-schema.ts`), and only through the untrusted fetcher
 * (`streams/untrusted-fetch.ts`): public addresses only unless the owner allows
 * private ones (`CHATCTX_SOURCES_PRIVATE_ADDRESSES`), one deadline over every hop and
 * the body, each redirect checked like the first address. The draft is deliberately not importable as it
 * stands: its guidance fields are empty strings and it carries `_`-prefixed
 * helper fields, both of which `records import` rejects until the owner has
 * filled it in and deleted them.
 */
import { parse, type HTMLElement } from 'node-html-parser';
import { SETTINGS } from '../config/settings.ts';
import { ValidationError } from '../errors/app-error.ts';
import type { IncomingHttpHeaders } from 'node:http';
import { UntrustedFetchError, UntrustedFetcher, type UntrustedResponse } from '../streams/untrusted-fetch.ts';

export interface DraftLimits {
  /** The most bytes of the page that are read; a larger page is refused. */
  readonly maxBytes: number;
  /** The whole fetch, redirects and body included, must finish within this. */
  readonly timeoutMs: number;
  /** The longest candidate passage, in words. */
  readonly excerptMaxWords: number;
  /** The license the draft names for the record's text. */
  readonly license: string;
}

/** A record file as the draft writes it: the importer's shape plus the `_` helper fields. */
export interface RecordDraft {
  readonly slug: string;
  readonly title: string;
  readonly topic: 'implementation';
  readonly task_types: [];
  readonly summary: '';
  readonly recommendation: '';
  readonly rationale: '';
  readonly applies_to: [];
  readonly conditions: [];
  readonly exceptions: [];
  readonly pitfalls: [];
  readonly verification_checks: [];
  readonly confidence: 'medium';
  readonly license: string;
  readonly sources: [
    { title: string; url: string; publisher: string; evidence_excerpt: string; relation: 'supports'; verified_at?: string; verified_from?: { page: string } },
  ];
  readonly _evidence_candidates: readonly string[];
  readonly _draft_note: string;
}

export interface DraftResult {
  readonly draft: RecordDraft;
  readonly passages: readonly string[];
  /** The page's address after redirects: the one the record cites. */
  readonly final_url: string;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const MAX_PASSAGES = 8;
const MIN_PASSAGE_WORDS = 8;
/** The schema's limit on an evidence excerpt, in characters. */
const MAX_EXCERPT_CHARS = 1000;
const MAX_TITLE_CHARS = 200;
const MAX_SLUG_CHARS = 120;
/** Page furniture whose text is never evidence. */
const NOT_CONTENT = 'script, style, noscript, template, svg, nav, header, footer';
const PASSAGE_TAGS = 'p, li, blockquote, dd';

const DRAFT_NOTE =
  'Fill in summary, recommendation and rationale, choose task_types, applies_to, conditions, exceptions, pitfalls and ' +
  'verification_checks, review confidence, and pick the evidence_excerpt that supports the recommendation (the ' +
  'candidates are in _evidence_candidates); then delete the fields starting with _ (the importer rejects them).';

/**
 * Fetches `url` (https only) and drafts a record citing it. Throws a
 * `ValidationError` saying what was wrong with the address or the page.
 */
export async function draftFromUrl(url: string, limits: DraftLimits, fetcher: PageFetcher = new UntrustedFetcher()): Promise<DraftResult> {
  const start = httpsUrl(url);
  const page = await fetchPage(start, limits, fetcher);
  const extracted = extractPage(page.html, page.url, limits.excerptMaxWords);
  return { draft: buildDraft(extracted, page.url.href, limits.license), passages: extracted.passages, final_url: page.url.href };
}

function httpsUrl(raw: string, redirectedFrom?: URL): URL {
  let url: URL;
  try {
    url = redirectedFrom ? new URL(raw, redirectedFrom) : new URL(raw);
  } catch {
    throw new ValidationError(redirectedFrom ? `${redirectedFrom.href} redirects to an invalid address.` : `${JSON.stringify(raw)} is not a web address.`);
  }
  if (url.protocol !== 'https:') {
    const what = redirectedFrom ? `${redirectedFrom.href} redirects to ${url.href}, which is not https` : `${url.href} is not an https address`;
    throw new ValidationError(`${what}; only https pages can be drafted from.`);
  }
  return url;
}

/** What the draft needs of the untrusted fetcher; tests stand in their own pages. */
export type PageFetcher = Pick<UntrustedFetcher, 'get'>;

/** The page and its address after redirects, all of it within one deadline. */
async function fetchPage(start: URL, limits: DraftLimits, fetcher: PageFetcher): Promise<{ html: string; url: URL }> {
  const deadline = Date.now() + limits.timeoutMs;
  let url = start;
  for (let redirects = 0; ; redirects++) {
    const answer = await fetchOnce(url, start, limits, fetcher, deadline);
    if (!REDIRECT_STATUSES.has(answer.status)) {
      // Only an answer that passed `pageProblem` has its body read.
      return { html: decode(answer.body!, header(answer.headers['content-type']) ?? null), url };
    }
    const location = header(answer.headers.location);
    if (!location) throw new ValidationError(`${url.href} answered ${answer.status} (a redirect) without saying where to.`);
    if (redirects === MAX_REDIRECTS) throw new ValidationError(`${start.href} redirects more than ${MAX_REDIRECTS} times; draft from the final page's address.`);
    url = httpsUrl(location, url);
  }
}

/** One hop: the untrusted fetcher's answer, or a `ValidationError` saying what went wrong in the owner's terms. */
async function fetchOnce(url: URL, start: URL, limits: DraftLimits, fetcher: PageFetcher, deadline: number): Promise<UntrustedResponse> {
  const left = deadline - Date.now();
  let problem: string | undefined;
  try {
    if (left <= 0) throw new UntrustedFetchError('deadline', 'out of time');
    const answer = await fetcher.get(url.href, {
      deadlineMs: left,
      maxBytes: limits.maxBytes,
      headers: { accept: 'text/html, application/xhtml+xml;q=0.9', 'user-agent': 'chatctx-records-draft' },
      wantBody: (status, headers) => !REDIRECT_STATUSES.has(status) && pageProblem(status, headers, url, limits.maxBytes) === undefined,
    });
    problem = REDIRECT_STATUSES.has(answer.status) ? undefined : pageProblem(answer.status, answer.headers, url, limits.maxBytes);
    if (!problem) return answer;
  } catch (error) {
    if (!(error instanceof UntrustedFetchError)) throw error;
    problem = fetchProblem(error, url, start, limits);
  }
  throw new ValidationError(problem);
}

function fetchProblem(error: UntrustedFetchError, url: URL, start: URL, limits: DraftLimits): string {
  switch (error.kind) {
    case 'deadline': {
      const seconds = limits.timeoutMs / 1000;
      return `${start.href} did not answer within ${seconds} second${seconds === 1 ? '' : 's'} (${SETTINGS.draftTimeoutSeconds.env}).`;
    }
    case 'too_large':
      return tooLarge(url, limits.maxBytes);
    case 'forbidden_address':
      return `${url.host} resolves to a loopback or private address, which drafts do not read (set ${SETTINGS.sourcesPrivateAddresses.env}=1 to draft from an intranet page).`;
    case 'unresolvable':
      return `Could not fetch ${url.href}: ${url.hostname} does not resolve.`;
    default:
      return `Could not fetch ${url.href}: ${error.message}`;
  }
}

/** Why a page that is not a redirect cannot be drafted from (before its body is read), if it cannot. */
function pageProblem(status: number, headers: IncomingHttpHeaders, url: URL, maxBytes: number): string | undefined {
  const type = (header(headers['content-type']) ?? '').split(';')[0]!.trim().toLowerCase();
  const length = Number(header(headers['content-length']) ?? NaN);
  if (status < 200 || status > 299) return `${url.href} answered HTTP ${status}; only a page that answers 2xx can be drafted from.`;
  if (!HTML_TYPES.has(type)) return `${url.href} is ${type ? `of type ${type}` : 'of no stated type'}, not an HTML page (text/html); only HTML pages can be drafted from.`;
  if (Number.isFinite(length) && length > maxBytes) return tooLarge(url, maxBytes);
  return undefined;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function tooLarge(url: URL, maxBytes: number): string {
  return `${url.href} is larger than ${maxBytes} bytes, the most a draft reads (${SETTINGS.draftMaxBytes.env}).`;
}

function decode(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

interface Extracted {
  readonly title: string;
  readonly publisher: string;
  readonly passages: string[];
}

/** Title, publisher and candidate passages of a parsed page. */
export function extractPage(html: string, url: URL, excerptMaxWords: number): Extracted {
  const root = parse(html, { comment: false });
  const title = clip(meta(root, 'og:title') || text(root.querySelector('title')) || text(root.querySelector('h1')), MAX_TITLE_CHARS) || clip(url.hostname + url.pathname, MAX_TITLE_CHARS);
  const publisher = clip(meta(root, 'og:site_name') || meta(root, 'application-name'), MAX_TITLE_CHARS) || url.hostname;
  for (const element of root.querySelectorAll(NOT_CONTENT)) element.remove();
  const content = root.querySelector('main') ?? root.querySelector('article') ?? root.querySelector('body') ?? root;
  return { title, publisher, passages: candidatePassages(content, excerptMaxWords) };
}

/** The whitespace-collapsed text of a node ('' for none). */
function text(node: HTMLElement | null): string {
  return (node?.text ?? '').replace(/\s+/g, ' ').trim();
}

function clip(value: string, max: number): string {
  const collapsed = value.replace(/\s+/g, ' ').trim();
  return collapsed.length <= max ? collapsed : collapsed.slice(0, max).trimEnd();
}

/** A `<meta>` value by its `property` or `name` (sites use either for Open Graph). */
function meta(root: HTMLElement, key: string): string {
  for (const element of root.querySelectorAll('meta')) {
    const name = (element.getAttribute('property') ?? element.getAttribute('name') ?? '').trim().toLowerCase();
    if (name === key) {
      const content = (element.getAttribute('content') ?? '').replace(/\s+/g, ' ').trim();
      if (content) return content;
    }
  }
  return '';
}

/**
 * Paragraphs, list items, quotations and definitions in page order, innermost
 * only (a list item holding paragraphs gives its paragraphs), each within the
 * word limits, de-duplicated, at most `MAX_PASSAGES`.
 */
function candidatePassages(content: HTMLElement, maxWords: number): string[] {
  const passages: string[] = [];
  const seen = new Set<string>();
  for (const element of content.querySelectorAll(PASSAGE_TAGS)) {
    if (element.querySelector(PASSAGE_TAGS)) continue;
    const passage = fitPassage(text(element), maxWords);
    if (!passage || seen.has(passage.toLowerCase())) continue;
    seen.add(passage.toLowerCase());
    passages.push(passage);
    if (passages.length === MAX_PASSAGES) break;
  }
  return passages;
}

const wordCount = (value: string) => (value.match(/\S+/g) ?? []).length;
const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/** The passage itself when it fits, else its first sentences that do, else nothing. */
function fitPassage(paragraph: string, maxWords: number): string | undefined {
  const fits = (value: string) => wordCount(value) <= maxWords && value.length <= MAX_EXCERPT_CHARS;
  if (wordCount(paragraph) < MIN_PASSAGE_WORDS) return undefined;
  if (fits(paragraph)) return paragraph;
  let raw = '';
  let taken = '';
  for (const { segment } of sentences.segment(paragraph)) {
    raw += segment;
    if (!fits(raw.trim())) break;
    taken = raw.trim();
  }
  return wordCount(taken) >= MIN_PASSAGE_WORDS ? taken : undefined;
}

/** A kebab-case slug the schema accepts, from the title (or the address when the title has no latin letters or digits). */
export function slugFrom(title: string, url: URL): string {
  const kebab = (value: string) =>
    value
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '');
  let slug = kebab(title);
  if (slug.length < 3) slug = kebab(`${url.hostname} ${url.pathname}`);
  if (slug.length < 3) slug = 'draft-record';
  if (slug.length > MAX_SLUG_CHARS) slug = slug.slice(0, MAX_SLUG_CHARS).replace(/-[^-]*$/, '') || slug.slice(0, MAX_SLUG_CHARS);
  return slug.replace(/-+$/, '');
}

// The empty strings and the `_` fields are on purpose: `records import` refuses
// the draft until the owner has written the guidance and deleted the helpers.
// There is no `reviewed_at`: the owner sets that when they review the record.
function buildDraft(page: Extracted, finalUrl: string, license: string): RecordDraft {
  return {
    slug: slugFrom(page.title, new URL(finalUrl)),
    title: page.title,
    topic: 'implementation',
    task_types: [],
    summary: '',
    recommendation: '',
    rationale: '',
    applies_to: [],
    conditions: [],
    exceptions: [],
    pitfalls: [],
    verification_checks: [],
    confidence: 'medium',
    license,
    sources: [
      {
        title: page.title,
        url: finalUrl,
        publisher: page.publisher,
        evidence_excerpt: page.passages[0] ?? '',
        relation: 'supports',
        // Every candidate was read from this page just now: the excerpt the owner keeps is verified as of today.
        ...(page.passages.length > 0 ? { verified_at: new Date().toISOString().slice(0, 10), verified_from: { page: finalUrl } } : {}),
      },
    ],
    _evidence_candidates: page.passages,
    _draft_note: DRAFT_NOTE,
  };
}
