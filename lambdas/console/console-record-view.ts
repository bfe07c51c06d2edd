/**
 * How the review queue and the records pages show a record: its text as a list of
 * fields, its sources with their evidence and how each was verified, a gate report,
 * and a word diff between two texts (`<ins>`/`<del>` with the words "added" and
 * "removed" for screen readers, so a change is never told by colour alone).
 */
import { diffWords } from 'diff';
import type { FieldChange, RecordDiff, ShownRecord } from '../records/record-history.ts';
import type { GateReport } from '../records/quality-gates.ts';
import type { RecordFile } from '../records/record-schema.ts';
import type { StoredCheck } from '../records/source-verification.ts';
import { h, join, table, when, type Html } from './console-page.ts';

export type { RecordDiff, ShownRecord };

export const recordPath = (slug: string) => `/console/records/${encodeURIComponent(slug)}`;
export const queuePath = (slug: string) => `/console/queue/${encodeURIComponent(slug)}`;

/** The fields of a record's text, in the order an owner reads them. */
const FIELD_LABELS: readonly [keyof RecordFile, string][] = [
  ['title', 'Title'],
  ['topic', 'Topic'],
  ['task_types', 'Task types'],
  ['summary', 'Summary'],
  ['recommendation', 'Recommendation'],
  ['rationale', 'Rationale'],
  ['applies_to', 'Applies to'],
  ['conditions', 'Conditions'],
  ['exceptions', 'Exceptions'],
  ['pitfalls', 'Pitfalls'],
  ['verification_checks', 'Verification checks'],
  ['asked_as', 'Asked as'],
  ['confidence', 'Confidence'],
  ['examples', 'Examples'],
  ['reviewed_at', 'Reviewed on'],
  ['license', 'Licence'],
  ['supersedes', 'Supersedes'],
];

export const fieldLabel = (field: string) => FIELD_LABELS.find(([name]) => name === field)?.[1] ?? field;

/** One item of a list field as a line of text. */
function itemText(item: unknown): string {
  if (typeof item === 'string') return item;
  if (item && typeof item === 'object' && 'name' in item) {
    const a = item as { kind?: string; name: string; version_constraint?: string };
    return `${a.name}${a.version_constraint ? ` ${a.version_constraint}` : ''}${a.kind ? ` (${a.kind})` : ''}`;
  }
  return JSON.stringify(item);
}

/** A field's value as text: a list one item per line. */
export function valueText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(itemText).join('\n');
  return typeof value === 'string' ? value : itemText(value);
}

function fieldValue(name: keyof RecordFile, value: unknown): Html {
  if (Array.isArray(value)) return h`<ul>${join(value.map((item) => h`<li>${itemText(item)}</li>`))}</ul>`;
  if (name === 'examples') return h`<pre tabindex="0">${String(value)}</pre>`;
  return h`${valueText(value)}`;
}

/** The record's text as a description list (empty fields left out). */
export function recordText(record: RecordFile): Html {
  const rows = FIELD_LABELS.flatMap(([name, label]) => {
    const value = record[name];
    if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) return [];
    return [h`<dt>${label}</dt><dd>${fieldValue(name, value)}</dd>`];
  });
  return h`<dl class="record">${join(rows)}</dl>`;
}

function verification(source: RecordFile['sources'][number], check: StoredCheck | null | undefined): Html {
  if (check) {
    const how = check.how === 'fetched' ? 'page fetched' : check.how === 'draft' ? 'read by a draft' : 'declared by the file';
    return h`<span class="${check.status === 'verified' ? 'verdict-pass' : 'verdict-fail'}">${check.status.replace('_', ' ')}</span> (${how}, ${when(check.checkedAt)})${check.detail ? h`: ${check.detail}` : ''}`;
  }
  if (source.verified_at) return h`declared verified on ${source.verified_at}, not checked by this store yet`;
  return h`not checked`;
}

/** The sources: link, publisher, relation, the quoted evidence, and how it was verified. */
export function sourcesTable(sources: RecordFile['sources'], checks: readonly (StoredCheck | null | undefined)[]): Html {
  const rows = sources.map((source, i) => {
    const link = /^https?:\/\//.test(source.url) ? h`<a href="${source.url}">${source.title}</a>` : h`${source.title}`;
    return h`<tr><th scope="row">${link}<br><span class="url">${source.url}</span></th><td>${source.publisher ?? 'not given'}</td><td>${source.relation}</td>
<td>${source.evidence_excerpt ? h`<blockquote>${source.evidence_excerpt}</blockquote>` : h`<span class="verdict-fail">no excerpt</span>`}</td><td>${verification(source, checks[i])}</td></tr>`;
  });
  return table('Sources', ['Source', 'Publisher', 'Relation', 'Evidence excerpt', 'Verification'], rows, 'No sources.');
}

const VERDICT_MARK: Record<string, string> = { pass: '✓', warn: '!', fail: '✗' };

/** A verdict in words with a mark and colour (the word carries it; the colour only repeats it). */
export function verdict(value: string): Html {
  return h`<span class="verdict-${value}"><span aria-hidden="true">${VERDICT_MARK[value] ?? ''} </span>${value}</span>`;
}

/** What an owner can do about each gate that warns or fails. */
const WHAT_TO_DO: Record<string, string> = {
  evidence: 'Quote 8 to 50 words from each source, word for word, and make sure one source supports the recommendation; run "chatctx records verify" to check the quotes against the pages.',
  source_authority: 'Cite the official documentation, a standard or the vendor; or, if this host is trustworthy, add it with "chatctx policy trust HOST".',
  freshness: 'Re-read the sources, then set reviewed_at to the day you did.',
  license: 'State an SPDX licence the source policy lists, and keep each excerpt a short quote.',
  version_scope: 'Give each framework, library, runtime or database a semver range, and name technologies as the vocabulary does (or add one with "chatctx policy add-technology").',
  duplicates: 'Merge it into the record it repeats, list that record in supersedes, or reword the title and asked_as phrasings that another record already uses.',
  conflicts: 'Read the other record: if one replaces the other, say so in supersedes; if both hold, state the conditions that separate them.',
  asked_as: 'Give 3 to 10 distinct phrasings agents would use, each 3 to 200 characters.',
};

/** The gate report as a table: gate, verdict, message, what to do. */
export function gateTable(report: GateReport | { gates: readonly { code: string; verdict: string; message: string }[] }, caption = 'Quality gates'): Html {
  const rows = report.gates.map(
    (gate) =>
      h`<tr><th scope="row"><code>${gate.code}</code></th><td>${verdict(gate.verdict)}</td><td class="text">${gate.message}</td><td class="text">${gate.verdict === 'pass' ? 'Nothing.' : (WHAT_TO_DO[gate.code] ?? 'Read the message.')}</td></tr>`,
  );
  return table(caption, ['Gate', 'Verdict', 'Message', 'What to do'], rows, 'No gates were run.');
}

/** Words removed and added between two values, marked for eyes and screen readers alike. */
export function wordDiff(before: unknown, after: unknown): Html {
  const parts = diffWords(valueText(before), valueText(after));
  return h`<div class="diff">${join(
    parts.map((part) => {
      if (part.added) return h`<ins><span class="visually-hidden">added: </span>${part.value}</ins>`;
      if (part.removed) return h`<del><span class="visually-hidden">removed: </span>${part.value}</del>`;
      return h`${part.value}`;
    }),
  )}</div>`;
}

/** Each changed field with its word diff. */
export function changesView(changes: readonly FieldChange[]): Html {
  if (changes.length === 0) return h`<p class="empty">The two texts are the same.</p>`;
  return join(changes.map((change) => h`<section class="change"><h3>${fieldLabel(change.field)}</h3>${wordDiff(change.before, change.after)}</section>`));
}

/** The newer text of a diff: the older one with the changed fields replaced. */
export function applyChanges(record: RecordFile, changes: readonly FieldChange[]): RecordFile {
  const text: Record<string, unknown> = { ...record };
  for (const change of changes) {
    if (change.after === undefined) delete text[change.field];
    else text[change.field] = change.after;
  }
  return text as RecordFile;
}

/** The stored check of a source of another text of the record (same page and excerpt), if any. */
export function checksFor(sources: RecordFile['sources'], shown: ShownRecord): (StoredCheck | null)[] {
  const known = shown.record.sources ?? [];
  return sources.map((source) => {
    const i = known.findIndex((k) => k.url === source.url && k.evidence_excerpt === source.evidence_excerpt);
    return i >= 0 ? (shown.source_checks[i] ?? null) : null;
  });
}
