/**
 * The owner-review part of the `chatctx` CLI: the review queue, approving behind
 * the quality gates (with reviewer and overrides), rejecting with a reason,
 * deprecating with a reason and successor, reading a record's gates, versions,
 * history (rejections included) and diffs, what is due for review, searching as an
 * agent would with why each candidate was shown or cut, and the store's additions
 * to the source policy. Printing only; every command is one
 * admin operation (`lambdas/admin/admin-operations.ts`), so it runs the same on a
 * local store, through a running server and with `--remote` on AWS.
 */
import { Command, InvalidArgumentError } from 'commander';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { SETTINGS, readSetting } from '../lambdas/config/settings.ts';
import type { AdminCommand, OwnerSearchAnswer, VerifyResult } from '../lambdas/admin/admin-operations.ts';
import type { GateReport } from '../lambdas/records/quality-gates.ts';
import type { StaleRecord } from '../lambdas/records/record-review.ts';
import type { RejectResult } from '../lambdas/records/record-rejection.ts';
import type { QueueItem } from '../lambdas/records/review-queue.ts';
import type { RecordHistory, ShownRecord } from '../lambdas/records/record-history.ts';
import { readRecordSources } from '../lambdas/records/record-files.ts';

export interface CliTools {
  admin<T>(command: AdminCommand): Promise<T>;
  print(human: string, json: unknown): void;
}

export interface Override {
  gate: string;
  reason: string;
}

/** `--override GATE="reason"`, repeatable. */
export function overrideArg(value: string, previous: Override[] = []): Override[] {
  const at = value.indexOf('=');
  if (at < 1) throw new InvalidArgumentError('expected GATE="why it may be published anyway", e.g. source_authority="vendor blog, the only published account".');
  return [...previous, { gate: value.slice(0, at).trim(), reason: value.slice(at + 1).trim() }];
}

/** The reviewer an approval records: the flag, else the configured name, else the login name. */
export function reviewerName(flag: string | undefined): string {
  if (flag?.trim()) return flag.trim();
  const configured = readSetting(process.env, 'reviewer');
  if (configured) return configured;
  try {
    return userInfo().username || 'unnamed reviewer';
  } catch {
    return 'unnamed reviewer';
  }
}

const MARK = { pass: 'pass', warn: 'WARN', fail: 'FAIL' } as const;

/** A gate report for people: one line per record, then one per gate (only the ones that did not pass unless `all`). */
export function gateLines(reports: readonly GateReport[], all = false): string[] {
  return reports.flatMap((report) => [
    `${report.slug}: ${MARK[report.verdict]}`,
    ...report.gates.filter((g) => all || g.verdict !== 'pass').map((g) => `  ${MARK[g.verdict]}  ${g.code}: ${g.message}`),
  ]);
}

const versionRef = (value: string): number | 'pending' => {
  if (value === 'pending') return value;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a version number (1, 2, …) or "pending".');
  return n;
};

function registerApproval(records: Command, { admin, print }: CliTools): void {
  records
    .command('approve')
    .description('publish candidates, deprecated records or approved records\' pending revisions, after the quality gates')
    .argument('<ids...>', 'slugs or ids')
    .option('--reviewer <name>', `who approves (default: $${SETTINGS.reviewer.env}, else your login name)`)
    .option('--override <gate=reason>', 'publish despite a failed gate, with the reason (repeatable)', overrideArg)
    .action(async (ids: string[], opts: { reviewer?: string; override?: Override[] }) => {
      const result = await admin<{ changed: number; gates: GateReport[]; embedding: { embedded: number; skipped_reason?: string } }>({
        op: 'records.approve',
        ids,
        reviewer: reviewerName(opts.reviewer),
        overrides: (opts.override ?? []) as never,
      });
      print([`${result.changed} record(s) approved.`, ...gateLines(result.gates)].join('\n'), result);
    });

  records
    .command('deprecate')
    .description('withdraw records from search and get_guidance')
    .argument('<ids...>', 'slugs or ids')
    .option('--reason <text>', 'why, kept with the record')
    .option('--superseded-by <slug>', 'the approved record that replaces them (get_guidance names it to agents)')
    .action(async (ids: string[], opts: { reason?: string; supersededBy?: string }) => {
      const result = await admin<{ changed: number }>({ op: 'records.deprecate', ids, reason: opts.reason, superseded_by: opts.supersededBy });
      print(`${result.changed} record(s) now deprecated${opts.supersededBy ? `, superseded by ${opts.supersededBy}` : ''}.`, result);
    });

  records
    .command('reject')
    .description("reject candidates or approved records' pending revisions; the text, who, why and when are kept (records history)")
    .argument('<ids...>', 'slugs or ids')
    .requiredOption('--reason <text>', 'why (10 to 1000 characters), kept with the rejection')
    .option('--reviewer <name>', `who rejects (default: $${SETTINGS.reviewer.env}, else your login name)`)
    .action(async (ids: string[], opts: { reason: string; reviewer?: string }) => {
      const result = await admin<RejectResult>({ op: 'records.reject', ids, reason: opts.reason, reviewer: reviewerName(opts.reviewer) });
      const lines = result.records.map((r) => `  ${r.slug}  ${r.kind === 'candidate' ? 'candidate removed' : 'revision dropped; the approved version keeps serving'}`);
      print([`${result.rejected} rejected.`, ...lines].join('\n'), result);
    });
}


function showLines(s: ShownRecord): string[] {
  const r = s.record as { title?: string; recommendation?: string; applies_to?: { name: string; version_constraint?: string }[]; sources?: { url: string }[] };
  const lines = [
    `${s.slug}  ${s.status}  version ${s.shown_version}${s.shown_version === s.content_version ? '' : ` (served: ${s.content_version})`}  collection ${s.collection}`,
    `title:          ${r.title ?? ''}`,
    `recommendation: ${r.recommendation ?? ''}`,
    `applies to:     ${(r.applies_to ?? []).map((a) => `${a.name}${a.version_constraint ? ` ${a.version_constraint}` : ''}`).join(', ') || '-'}`,
    `sources:        ${(r.sources ?? []).map((x) => x.url).join(', ')}`,
    `updated_at ${s.updated_at}   reviewed_at ${s.reviewed_at ?? 'never'}   license ${s.license ?? '(store default)'}`,
  ];
  if (s.approval) {
    lines.push(`approved by ${s.approval.approved_by ?? 'unknown'} at ${s.approval.approved_at}, gates: ${s.approval.verdict ?? 'not run'}`);
    for (const g of s.approval.gates.filter((x) => x.verdict !== 'pass')) lines.push(`  ${MARK[g.verdict as 'warn']}  ${g.code}: ${g.message}`);
    for (const o of s.approval.overrides) lines.push(`  override ${o.gate}: ${o.reason}`);
  } else lines.push('not approved in this version');
  if (s.pending_revision) lines.push(`a revision waits for review since ${s.pending_revision.staged_at}: chatctx records diff ${s.slug}`);
  if (s.deprecation) {
    lines.push(`deprecated ${s.deprecation.deprecated_at}${s.deprecation.reason ? `: ${s.deprecation.reason}` : ''}${s.deprecation.superseded_by ? ` (successor: ${s.deprecation.superseded_by})` : ''}`);
  }
  return lines;
}

function registerReading(records: Command, { admin, print }: CliTools): void {
  records
    .command('gates')
    .description('the quality-gate report of a stored record (its pending revision, else its text) or of record files before import')
    .argument('<slug-or-path>', 'a slug or id, or a .json/.jsonl file or folder')
    .action(async (target: string) => {
      const command: AdminCommand = existsSync(target)
        ? { op: 'records.gates', ...(await readRecordSources(resolve(target)).then(({ values, where }) => ({ records: values, where }))) }
        : { op: 'records.gates', ids: [target] };
      const reports = await admin<GateReport[]>(command);
      print(gateLines(reports, true).join('\n'), reports);
      if (reports.some((r) => r.verdict === 'fail')) process.exitCode = 2;
    });

  records
    .command('show')
    .description('a record as served (or an approved version), with who approved it, its gate report and overrides')
    .argument('<slug>', 'slug or id')
    .option('--record-version <n>', 'an approved content_version (`--version N` works here too)', (v) => versionRef(v) as number)
    .action(async (id: string, opts: { recordVersion?: number }) => {
      const shown = await admin<ShownRecord>({ op: 'records.show', id, version: opts.recordVersion });
      print(showLines(shown).join('\n'), shown);
    });

  records
    .command('history')
    .description('every approved version of a record: who approved it, when, gate verdict, overrides; then any pending revision, deprecation, rejection and move between collections')
    .argument('<slug>', 'slug or id')
    .action(async (id: string) => {
      const h = await admin<RecordHistory>({ op: 'records.history', id });
      const lines = [
        `${h.slug}  ${h.status}${h.collection ? `  collection ${h.collection}` : ''}`,
        ...h.versions.map(
          (v) => `  v${v.content_version}  approved ${v.approved_at} by ${v.approved_by ?? 'unknown'}  gates ${v.verdict ?? 'not run'}` +
            (v.overrides.length ? `  overrides: ${v.overrides.map((o) => o.gate).join(', ')}` : ''),
        ),
        ...(h.pending_revision ? [`  pending revision staged ${h.pending_revision.staged_at}`] : []),
        ...(h.deprecation ? [`  deprecated ${h.deprecation.deprecated_at}${h.deprecation.superseded_by ? `, successor ${h.deprecation.superseded_by}` : ''}`] : []),
        ...(h.rejections ?? []).map((r) => `  ${r.kind} rejected ${r.rejected_at} by ${r.rejected_by}: ${r.reason}`),
        ...(h.moves ?? []).map((m) => `  moved ${m.moved_at} from ${m.from} to ${m.to} by ${m.reviewer}: ${m.reason}`),
      ];
      print(lines.join('\n'), h);
    });

  records
    .command('diff')
    .description('what changed between two versions (default: served vs pending revision, else the last two approved versions)')
    .argument('<slug>', 'slug or id')
    .argument('[from]', 'a version number or "pending"', versionRef)
    .argument('[to]', 'a version number or "pending"', versionRef)
    .action(async (id: string, from?: number | 'pending', to?: number | 'pending') => {
      const d = await admin<{ slug: string; from: number | string; to: number | string; changes: { field: string; diff: string }[] }>({ op: 'records.diff', id, from, to });
      const lines = [`${d.slug}: ${d.from} → ${d.to}, ${d.changes.length} field(s) changed`, ...d.changes.flatMap((c) => [`${c.field}:`, ...c.diff.split('\n').map((l) => `  ${l}`)])];
      print(lines.join('\n'), d);
    });

  records
    .command('stale')
    .description('approved records due for review: reviewed_at older than the freshness rules, or a source whose excerpt a check since approval did not find')
    .action(async () => {
      const rows = await admin<StaleRecord[]>({ op: 'records.stale' });
      const lines = (r: StaleRecord) => [
        `${MARK[r.verdict]}  ${r.slug}  reviewed ${r.reviewed_at ?? 'never'}${r.months === null ? '' : ` (${r.months} months ago)`}`,
        ...r.sources.map((s) => `      ${s.status} ${s.url} (checked ${s.checked_at.slice(0, 10)}${s.similarity === null ? '' : `, closest passage ${Math.round(s.similarity * 100)}% alike`})`),
      ];
      print(rows.length === 0 ? 'No approved record is due for review.' : rows.flatMap(lines).join('\n'), rows);
    });
}

function registerVerify(records: Command, { admin, print }: CliTools): void {
  records
    .command('verify')
    .description('check that each quoted evidence_excerpt is still on the page it cites (default: every approved and candidate record); exits 1 when any is not verified')
    .argument('[records...]', 'slugs or ids of the records to check')
    .action(async (ids: string[]) => {
      const result = await admin<VerifyResult>({ op: 'records.verify', ids });
      const line = (s: VerifyResult['sources'][number]) => {
        const why = s.status === 'drifted' ? ` closest passage (${Math.round((s.similarity ?? 0) * 100)}% alike): "${s.closest}"` : s.detail ? ` ${s.detail}` : '';
        return `${s.status.padEnd(11)} ${s.slugs.join(', ')}  ${s.url}${why}`;
      };
      const counts = Object.entries(result.counts).map(([status, n]) => `${n} ${status}`).join(', ');
      print([...result.sources.filter((s) => s.status !== 'verified').map(line), `${result.checked} source(s) checked: ${counts || 'none'}`].join('\n'), result);
      if (result.sources.some((s) => s.status !== 'verified')) process.exitCode = 1;
    });
}

function registerPolicy(program: Command, { admin, print }: CliTools): void {
  const policy = program
    .command('policy')
    .description("the store's additions to the source policy (guidance/policy/source-policy.json), the technology vocabulary and the query synonyms");
  type Entry = { kind: string; value: string; note: string | null };
  type Synonym = { term: string; expansions: string[] };
  const shown = (added: Entry[]) => (added.length === 0 ? 'No additions; the repository policy applies as is.' : added.map((e) => `${e.kind}  ${e.value}${e.note ? `  (${e.note})` : ''}`).join('\n'));
  const synonymLines = (added: Synonym[]) => added.map((s) => `synonym  ${s.term} → ${s.expansions.map((e) => `"${e}"`).join(', ')}`);
  policy
    .command('list')
    .description('the additions in this store, and the synonyms applied to queries (--json: the whole effective policy and every default synonym too)')
    .action(async () => {
      const result = await admin<{ added: Entry[]; synonyms: { defaults: Record<string, string[]>; added: Synonym[] } }>({ op: 'policy.list' });
      const defaults = Object.keys(result.synonyms.defaults).length;
      const lines = [
        shown(result.added),
        ...synonymLines(result.synonyms.added),
        `${defaults} default synonyms (guidance/policy/synonyms.json)${result.synonyms.added.length ? `; ${result.synonyms.added.length} added in this store` : ''}.`,
      ];
      print(lines.join('\n'), result);
    });
  const change = (kind: 'authoritative' | 'blocked' | 'technology', value: string, note?: string, remove = false) =>
    admin<{ added: Entry[] }>({ op: 'policy.change', kind, value, note, remove }).then((r) => print(shown(r.added), r));
  const synonym = (term: string, expansions: string[] | undefined, remove: boolean) =>
    admin<{ synonyms: Synonym[] }>({ op: 'policy.synonym', term, expansions, remove }).then((r) =>
      print(r.synonyms.length === 0 ? 'No synonyms added in this store; the defaults apply.' : synonymLines(r.synonyms).join('\n'), r),
    );
  policy.command('trust').description('treat a host as authoritative').argument('<host>').option('--note <publisher>').action((h: string, o: { note?: string }) => change('authoritative', h, o.note));
  policy.command('block').description('fail sources on a host').argument('<host>').requiredOption('--reason <text>').action((h: string, o: { reason: string }) => change('blocked', h, o.reason));
  policy.command('add-technology').description('add a technology name to the vocabulary').argument('<name>').action((n: string) => change('technology', n));
  policy
    .command('add-synonym')
    .description('search a term together with its expansions in every question (replaces a default for the same term)')
    .argument('<term>', 'a word or phrase, matched as whole words in any case')
    .argument('<expansions...>', 'what it also means, e.g. "cross-site scripting"')
    .action((term: string, expansions: string[]) => synonym(term, expansions, false));
  policy
    .command('remove')
    .description('drop an addition')
    .argument('<kind>', 'authoritative, blocked, technology or synonym')
    .argument('<value>')
    .action((kind: string, value: string) => (kind === 'synonym' ? synonym(value, undefined, true) : change(kind as 'technology', value, undefined, true)));
}

/**
 * `records show SLUG --version N` asks for a version of the record, but the root
 * command owns `--version` (it prints the CLI's) wherever it appears; so after
 * `records show` it is read as `--record-version`.
 */
export function recordVersionArgs(argv: readonly string[]): string[] {
  const records = argv.indexOf('records');
  if (records < 0 || argv[records + 1] !== 'show') return [...argv];
  return argv.map((arg, i) => (i > records + 1 && arg === '--version' ? '--record-version' : arg.startsWith('--version=') && i > records + 1 ? arg.replace('--version=', '--record-version=') : arg));
}

interface ProfileView {
  profile: string;
  threshold: number;
  minShareOfTop: number;
  calibrated: boolean;
  embedder: { model: string; dimensions: number } | null;
  fitted?: { at?: string; questions?: number };
}

function registerRelevance(program: Command, { admin, print }: CliTools): void {
  const relevance = program
    .command('relevance')
    .description('the relevance profiles that decide what search_knowledge shows (fit them with `npm run eval:guidance -- --calibrate`)');
  const line = (p: ProfileView, source: string) =>
    `${p.profile.padEnd(8)}  ${source.padEnd(7)}  threshold ${p.threshold}  tail ${p.minShareOfTop}  ` +
    `${p.calibrated ? `calibrated${p.embedder ? ` on ${p.embedder.model} (${p.embedder.dimensions}-d)` : ''}${p.fitted?.at ? ` ${p.fitted.at.slice(0, 10)}` : ''}` : 'not calibrated for this encoder'}`;
  relevance
    .command('list')
    .description('each profile in force, whether this store calibrated it, and which one the configured encoder uses')
    .action(async () => {
      const r = await admin<{ active: string; profiles: Record<string, ProfileView>; stored: { profile: string }[] }>({ op: 'relevance.list' });
      const stored = new Set(r.stored.map((s) => s.profile));
      const lines = [
        ...Object.values(r.profiles).map((p) => line(p, stored.has(p.profile) ? 'store' : 'default')),
        `The configured encoder uses "${r.active}"; searches without a query vector use "none".`,
      ];
      print(lines.join('\n'), r);
    });
  relevance
    .command('remove')
    .description("drop this store's calibration of a profile, so the reviewed default applies again")
    .argument('<profile>', 'use-lite, titan-v2 or none')
    .action(async (profile: string) => {
      const r = await admin<{ stored: { profile: string }[] }>({ op: 'relevance.remove', profile: profile as 'none' });
      print(r.stored.length === 0 ? 'No calibrated profile in this store; the defaults apply.' : `Calibrated in this store: ${r.stored.map((s) => s.profile).join(', ')}.`, r);
    });
}

/** The queue as a table: oldest first, one line per record with its gate verdict, then the gates that did not pass. */
export function queueLines(items: readonly QueueItem[]): string[] {
  if (items.length === 0) return ['Nothing waits for review.'];
  const width = Math.max(...items.map((i) => i.slug.length));
  return items.flatMap((item) => [
    `${item.staged_at.slice(0, 19).replace('T', ' ')}  ${item.kind.padEnd(9)}  ${item.slug.padEnd(width)}  ${item.gates ? MARK[item.gates.verdict] : 'no file'}  ${item.title}`,
    ...(item.gates?.gates ?? []).filter((g) => g.verdict !== 'pass').map((g) => `      ${MARK[g.verdict]}  ${g.code}: ${g.message}`),
  ]);
}

/** An explained search: the collections read, the candidates shown, then the ones cut with the reason. */
export function searchLines(r: OwnerSearchAnswer): string[] {
  const e = r.explain;
  const line = (c: OwnerSearchAnswer['explain']['candidates'][number]) =>
    `  ${c.slug}  p=${c.probability.toFixed(2)} score=${c.score.toFixed(3)} boosted=${c.boosted.toFixed(3)}${c.reason ? `  ${c.reason}` : ''}${c.note ? `  (${c.note})` : ''}`;
  const shown = e.candidates.filter((c) => c.outcome === 'shown');
  const cut = e.candidates.filter((c) => c.outcome === 'cut');
  const read = r.collections.every_collection
    ? `collections: every one (${r.collections.names.join(', ')}); an owner sees everything, a guest only public and a key its own (--collections narrows this)`
    : `collections: ${r.collections.names.join(', ')}`;
  return [
    read,
    `${e.mode}: ${shown.length} shown of ${e.total_candidates} candidate(s); profile ${e.profile.name} (threshold ${e.profile.threshold}, tail ${e.profile.min_share_of_top})`,
    shown.length ? 'Shown:' : 'Shown: none',
    ...shown.map(line),
    ...(cut.length ? ['Cut:', ...cut.map(line)] : []),
  ];
}

const commaList = (v: string) => v.split(',').map((t) => t.trim()).filter(Boolean);

function registerQueue(records: Command, { admin, print }: CliTools): void {
  records
    .command('queue')
    .description('what waits for review: every candidate and every pending revision, oldest first, with its gate verdict')
    .action(async () => {
      const items = await admin<QueueItem[]>({ op: 'records.queue' });
      print(queueLines(items).join('\n'), items);
    });

  records
    .command('search')
    .description("search as an agent's search_knowledge would, and see why each judged candidate was shown or cut (no search event, quota or log of the question)")
    .argument('<question>', 'the question, as an agent would ask it')
    .option('--technologies <list>', 'comma-separated, e.g. react,typescript', commaList)
    .option('--topic <topic>', 'one of the topics search_knowledge takes')
    .option('--task-type <type>', 'one of the task types search_knowledge takes')
    .option('--max-results <n>', 'at most this many results', (v: string) => Number(v))
    .option('--detail <level>', 'brief or standard')
    .option('--token-budget <n>', 'the answer\'s token budget', (v: string) => Number(v))
    .option('--collections <list>', 'search only these collections, comma-separated, as a key scoped to them would (default: every collection)', commaList)
    .action(async (query: string, opts: { technologies?: string[]; topic?: string; taskType?: string; maxResults?: number; detail?: string; tokenBudget?: number; collections?: string[] }) => {
      const args = { query, technologies: opts.technologies, topic: opts.topic, task_type: opts.taskType, max_results: opts.maxResults, detail: opts.detail, token_budget: opts.tokenBudget };
      const result = await admin<OwnerSearchAnswer>({
        op: 'records.search',
        arguments: Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)),
        collections: opts.collections,
      });
      print(searchLines(result).join('\n'), result);
    });
}

export function registerReviewCommands(program: Command, records: Command, tools: CliTools): void {
  registerQueue(records, tools);
  registerApproval(records, tools);
  registerReading(records, tools);
  registerVerify(records, tools);
  registerPolicy(program, tools);
  registerRelevance(program, tools);
}
