/**
 * The `chatctx` command line: serve the local MCP endpoint and run owner
 * commands (keys, records, collections). Wiring and printing only; the work is in `lambdas/`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { readLocalConfig } from '../lambdas/local/local-config.ts';
import { ConfigError, SETTINGS, readSettings, settingGiven } from '../lambdas/config/settings.ts';
import { DataDirError, findDataDir } from '../lambdas/local/data-dir.ts';
import { runLocalAdmin } from '../lambdas/local/admin-client.ts';
import { readRecordSources } from '../lambdas/records/record-files.ts';
import { AppError, ValidationError } from '../lambdas/errors/app-error.ts';
import { createLogger } from '../lambdas/observability/logger.ts';
import type { AdminCommand, AnalyticsResult, BackfillResult, ImportResult } from '../lambdas/admin/admin-operations.ts';
import { SingleBar, Presets } from 'cli-progress';
import { createEmbedder } from '../lambdas/embeddings/embedder-factory.ts';
import type { EmbedProgress } from '../lambdas/embeddings/record-embeddings.ts';
import type { RecordSummary } from '../lambdas/records/record-review.ts';
import { registerConsoleCommand } from './console-command.ts';
import { registerCollectionCommands } from './collection-commands.ts';
import { gateLines, overrideArg, recordVersionArgs, registerReviewCommands, reviewerName, type Override } from './review-commands.ts';
import type { FeedbackReviewResult, FeedbackRow } from '../lambdas/feedback/feedback-repository.ts';
import type { OwnerCreatedKey, OwnerKeyInfo } from '../lambdas/admin/key-scopes.ts';

// Everything this process creates (the store, the pepper, tokens) is for its owner only.
process.umask(0o077);

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('chatctx')
  .description('Owner-reviewed engineering guidance for coding agents, over MCP.')
  .version(version)
  .option('--data-dir <dir>', `data directory (default: $${SETTINGS.dataDir.env}, else the nearest .chatctx/ here or above)`)
  .option('--json', 'print machine-readable JSON')
  .option('--remote <function>', 'run key/record commands on a deployed stack: the admin Lambda function name (uses your AWS credentials)')
  .showHelpAfterError();

const globals = () => program.opts<{ dataDir?: string; json?: boolean; remote?: string }>();

/**
 * The data directory a command works on: `--data-dir`, else `CHATCTX_DATA_DIR`,
 * else the nearest `.chatctx/` holding a store in this folder or above. Only
 * `serve` creates one where none exists; another command refuses rather than
 * silently starting an empty store because it ran from another folder.
 */
function dataDir(forServe = false): string {
  const flag = globals().dataDir;
  if (flag) return resolve(flag);
  if (settingGiven(process.env, 'dataDir')) return readLocalConfig().dataDir;
  const name = SETTINGS.dataDir.defaultValue!;
  const found = findDataDir(process.cwd(), name);
  if (found) return found;
  if (forServe) return resolve(name);
  throw new DataDirError(
    `No chatctx data directory (${name}/ with a store) in ${process.cwd()} or any folder above it. Start the server once ` +
      `where it should live (npm start), or name it with --data-dir or ${SETTINGS.dataDir.env}.`,
  );
}
const print = (human: string, json: unknown) => console.log(globals().json ? JSON.stringify(json, null, 2) : human);

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number (0 or more).');
  return n;
}

function quotaArg(value: string): number | null {
  return value === 'unlimited' ? null : wholeNumber(value);
}

/**
 * Runs an owner command; long ones show a progress bar on stderr. When no server
 * holds the data directory the command embeds with the configured provider itself.
 */
async function admin<T>(command: AdminCommand): Promise<T> {
  let bar: SingleBar | undefined;
  const onProgress = ({ done, total }: EmbedProgress) => {
    if (total === 0 || globals().json) return;
    bar ??= new SingleBar({ format: 'embedding {bar} {value}/{total} records  {eta_formatted} left', stream: process.stderr }, Presets.shades_classic);
    if (done === 0) bar.start(total, 0);
    else bar.update(done);
  };
  try {
    const remote = globals().remote;
    // Loaded only when asked for: the AWS SDK alone would add a tenth of a second to every command.
    if (remote) {
      // An import larger than one Invoke request can carry goes in chunks, each told on stderr.
      const onChunk = ({ index, count, first, last }: { index: number; count: number; first: number; last: number }) =>
        globals().json || console.error(`chunk ${index}/${count}: records ${first}–${last}`);
      return (await (await import('../lambdas/aws/remote-import.ts')).runRemoteCommand(remote, command, { onChunk })) as T;
    }
    const config = readLocalConfig();
    const embedder = () => createEmbedder({ provider: config.embeddings, bedrockModelId: config.bedrockModelId });
    const onWait = (holder: string) => console.error(`waiting for ${holder} to finish…`);
    const dir = dataDir();
    if (!globals().json) console.error(`data directory: ${dir}`);
    const retention = { searchEventRetentionDays: config.searchEventRetentionDays, sourcesPrivateAddresses: config.sourcesPrivateAddresses };
    return (await runLocalAdmin(dir, command, { embedder, onProgress, onWait, ...retention })) as T;
  } finally {
    bar?.stop();
  }
}

/** A key's scopes as owners type them: its collections, then `feedback` when it may send feedback. */
const scopesText = (k: OwnerKeyInfo) => [...k.collections, ...(k.feedback ? ['feedback'] : [])].join(', ');

function keyLine(k: OwnerKeyInfo): string {
  const quota = k.daily_quota === null ? 'unlimited' : `${k.daily_quota}/day`;
  const state = k.revoked_at ? `revoked ${k.revoked_at}` : 'active';
  return `${k.id}  ${k.name}  ${quota}  scopes: ${scopesText(k)}  ${state}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}`;
}

/** A comma-separated list of scope names (`a,b`); repeating the option adds to it. */
function scopeList(value: string, previous: string[] = []): string[] {
  const names = value.split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0) throw new InvalidArgumentError('expected one or more names separated by commas, e.g. public,internal.');
  return [...previous, ...names];
}

program
  .command('serve')
  .description('start the local MCP server on the embedded store')
  .option('--port <n>', `TCP port (default: $${SETTINGS.port.env} or ${SETTINGS.port.defaultValue}; 0 picks a free one)`, wholeNumber)
  .option('--host <address>', `address to bind (default: $${SETTINGS.host.env} or ${SETTINGS.host.defaultValue})`)
  .action(async (opts: { port?: number; host?: string }) => {
    const overrides: Record<string, string> = { [SETTINGS.dataDir.env]: dataDir(true) };
    if (opts.port !== undefined) overrides[SETTINGS.port.env] = String(opts.port);
    if (opts.host !== undefined) overrides[SETTINGS.host.env] = opts.host;
    const config = readLocalConfig({ ...process.env, ...overrides });
    const started = performance.now();
    const { startLocalServer } = await import('../lambdas/local/local-server.ts');
    const server = await startLocalServer(config, createLogger());
    const clientConfig = { servers: { chatctx: { type: 'http', url: server.mcpUrl } } };
    console.log(
      [
        `chatctx is serving MCP at ${server.mcpUrl}  (ready in ${Math.round(performance.now() - started)} ms)`,
        `data directory: ${config.dataDir}` +
          (server.starterCorpusLoaded ? `  (loaded ${server.starterCorpusLoaded} starter records)` : ''),
        `guest access: ${config.guestDailyLimit > 0 ? `${config.guestDailyLimit} tool calls per IP per UTC day` : 'off (API key required)'}`,
        `embeddings: ${config.embeddings === 'none' ? 'none (keyword search only)' : config.embeddings}`,
        '',
        'Client configuration (VS Code .vscode/mcp.json; Cursor uses "mcpServers" instead of "servers"):',
        JSON.stringify(clientConfig, null, 2),
        '',
        `Claude Code:  claude mcp add --transport http chatctx ${server.mcpUrl}`,
        'API key:      npx chatctx keys create --name my-agent   (then add the header Authorization: Bearer <key>)',
        'Stop with Ctrl+C.',
      ].join('\n'),
    );
    const stop = async () => {
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

const keys = program.command('keys').description('issue, list and revoke API keys, and set what each may see (its scopes)');

keys
  .command('create')
  .description('create an API key (the key is printed once); it sees the public collection and may send feedback unless told otherwise')
  .requiredOption('--name <name>', 'a label for the key, e.g. the agent or team using it')
  .addOption(new Option('--daily-quota <n>', 'tool calls per UTC day (default: unlimited)').argParser(wholeNumber))
  .option('--collections <a,b>', 'the collections the key searches, comma-separated (default: public)', scopeList)
  .option('--no-feedback', 'the key may not call submit_feedback')
  .action(async (opts: { name: string; dailyQuota?: number; collections?: string[]; feedback: boolean }) => {
    const key = await admin<OwnerCreatedKey>({
      op: 'keys.create',
      name: opts.name,
      daily_quota: opts.dailyQuota ?? null,
      collections: opts.collections,
      feedback: opts.feedback,
    });
    print(
      [
        `Created key ${key.id} (${key.name}, ${key.daily_quota === null ? 'unlimited' : `${key.daily_quota} calls/day`}).`,
        `Scopes: ${scopesText(key)}`,
        '',
        `  ${key.key}`,
        '',
        'This is the only time the key is shown; store it now. Send it as: Authorization: Bearer <key>',
        `Revoke it with: chatctx keys revoke ${key.id}`,
      ].join('\n'),
      key,
    );
  });

keys
  .command('list')
  .description('list API keys (never their plaintext)')
  .action(async () => {
    const list = await admin<OwnerKeyInfo[]>({ op: 'keys.list' });
    print(list.length === 0 ? 'No API keys yet. Create one with: chatctx keys create --name NAME' : list.map(keyLine).join('\n'), list);
  });

keys
  .command('revoke')
  .description('revoke an API key; it is refused with 401 from then on')
  .argument('<id>', 'the key id printed by keys create or keys list')
  .action(async (id: string) => {
    const key = await admin<OwnerKeyInfo & { already_revoked: boolean }>({ op: 'keys.revoke', id });
    print(key.already_revoked ? `Key ${key.id} (${key.name}) was already revoked, at ${key.revoked_at}.` : `Revoked ${key.id} (${key.name}).`, key);
  });

keys
  .command('set-quota')
  .description('set a key\'s daily tool-call quota ("unlimited" removes it)')
  .argument('<id>', 'the key id')
  .argument('<n>', 'tool calls per UTC day, or "unlimited"', quotaArg)
  .action(async (id: string, n: number | null) => {
    const key = await admin<OwnerKeyInfo>({ op: 'keys.set_quota', id, daily_quota: n });
    print(`Key ${key.id} (${key.name}) now has ${n === null ? 'no daily limit' : `${n} tool calls per UTC day`}.`, key);
  });

keys
  .command('scope')
  .description(
    "add or remove a key's scopes: collection names, or \"feedback\" (may call submit_feedback). The key's OAuth tokens follow it. " +
      'A local server applies it at once; on AWS a warm gateway within its key cache time.',
  )
  .argument('<id>', 'the key id')
  .option('--add <a,b>', 'scopes to add, comma-separated', scopeList)
  .option('--remove <a,b>', 'scopes to remove, comma-separated', scopeList)
  .action(async (id: string, opts: { add?: string[]; remove?: string[] }) => {
    if (!opts.add && !opts.remove) throw new ValidationError('Name a scope to change: --add NAMES or --remove NAMES (collections, or "feedback").');
    const key = await admin<OwnerKeyInfo>({ op: 'keys.scope', id, add: opts.add ?? [], remove: opts.remove ?? [] });
    print(`Key ${key.id} (${key.name}) now has the scopes: ${scopesText(key)}.`, key);
  });

const records = program.command('records').description('import and review guidance records');

records
  .command('import')
  .description('import records from a JSON or JSONL file or a folder of them, in one transaction (with --remote, a large import goes in chunks under 5 MB, one transaction each)')
  .argument('<path>', 'file or folder')
  .option('--approve', 'publish the records (you reviewed them); the quality gates must pass or be overridden', false)
  .option('--reviewer <name>', `who approves (default: $${SETTINGS.reviewer.env}, else your login name)`)
  .option('--override <gate=reason>', 'publish despite a failed gate, with the reason (repeatable)', overrideArg)
  .option('--collection <name>', 'the collection new records go into, unless a record names its own (default: public); a stored record stays where it is (records move)')
  .action(async (path: string, opts: { approve: boolean; reviewer?: string; override?: Override[]; collection?: string }) => {
    const { values, where } = await readRecordSources(resolve(path));
    const summary = await admin<ImportResult>({
      op: 'records.import',
      records: values,
      where,
      approve: opts.approve,
      reviewer: reviewerName(opts.reviewer),
      overrides: (opts.override ?? []) as never,
      collection: opts.collection,
    });
    const { changed_ids: _ids, ...shown } = summary;
    const notes = gateLines(summary.gates.filter((g) => g.verdict !== 'pass'));
    print(
      [
        `Imported ${summary.slugs.length} record(s): ${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged` +
          `${summary.staged ? `, ${summary.staged} revision(s) staged for review` : ''}; ` +
          `${summary.approved} approved, ${summary.candidates} candidate(s), ${summary.deprecated} deprecated.`,
        `Embedded ${summary.embedding.embedded} record(s)` + (summary.embedding.skipped_reason ? ` (${summary.embedding.skipped_reason}).` : '.'),
        ...(notes.length ? ['Quality gates:', ...notes.map((l) => `  ${l}`)] : []),
        ...(opts.approve ? [] : ['Candidates and revisions are not served until approved: chatctx records approve SLUG …']),
      ].join('\n'),
      shown,
    );
  });

records
  .command('list')
  .description('list records (slug, status, version, collection, whether the embedding is current)')
  .option('--status <status>', 'candidate, approved or deprecated')
  .option('--collection <name>', 'only the records of this collection')
  .option('--limit <n>', 'at most this many records (up to 10000)', (v) => Number(v), 1000)
  .action(async (opts: { status?: 'candidate' | 'approved' | 'deprecated'; collection?: string; limit: number }) => {
    const list = await admin<RecordSummary[]>({ op: 'records.list', status: opts.status, collection: opts.collection, limit: opts.limit });
    // A full page may not be all of them: say so instead of letting a count look complete.
    if (list.length === opts.limit) console.error(`showing the first ${opts.limit} records; pass --limit (up to 10000) for more`);
    print(
      list.length === 0
        ? 'No records.'
        : list
            .map((r) => `${r.slug}  ${r.status}  v${r.content_version}${r.pending_revision ? ' (+revision)' : ''}  ${r.collection}  ${r.embedded ? 'embedded' : 'not embedded'}  ${r.title}`)
            .join('\n'),
      list,
    );
  });

/** Writes a new file; an existing one is never overwritten. */
async function writeNewFile(file: string, content: string): Promise<void> {
  try {
    await writeFile(file, content, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new ValidationError(`${file} already exists; it was left as it is. Name another file with --out.`);
    throw error;
  }
}

records
  .command('draft')
  .description('draft a record file from an https page for you to complete: its title, publisher and candidate evidence filled in')
  .requiredOption('--from-url <url>', 'the https page the record will cite')
  .option('--out <file>', 'where to write the draft (default: <slug>.json in this folder); never overwritten')
  .action(async (opts: { fromUrl: string; out?: string }) => {
    if (opts.out && existsSync(resolve(opts.out))) throw new ValidationError(`${resolve(opts.out)} already exists; it was left as it is. Name another file with --out.`);
    const limits = readSettings(process.env, ['draftMaxBytes', 'draftTimeoutSeconds', 'excerptMaxWords', 'defaultLicense', 'sourcesPrivateAddresses']);
    const { draftFromUrl } = await import('../lambdas/records/record-draft.ts');
    const { UntrustedFetcher } = await import('../lambdas/streams/untrusted-fetch.ts');
    const fetcher = new UntrustedFetcher(limits.sourcesPrivateAddresses ? { allowAddress: () => true } : {});
    const { draft, passages, final_url } = await draftFromUrl(
      opts.fromUrl,
      {
        maxBytes: limits.draftMaxBytes,
        timeoutMs: limits.draftTimeoutSeconds * 1000,
        excerptMaxWords: limits.excerptMaxWords,
        // `none` means a record must state its own license: the draft leaves it for the owner.
        license: limits.defaultLicense === 'none' ? '' : limits.defaultLicense,
      },
      fetcher,
    );
    const file = resolve(opts.out ?? `${draft.slug}.json`);
    await writeNewFile(file, JSON.stringify(draft, null, 2) + '\n');
    const publisher = draft.sources[0].publisher;
    print(
      [
        `Wrote a draft record to ${file}`,
        `  title:     ${draft.title}`,
        `  publisher: ${publisher}`,
        `  source:    ${final_url}`,
        `  ${passages.length} candidate evidence passage(s) in _evidence_candidates`,
        `Complete it, then: chatctx records import ${file}`,
      ].join('\n'),
      { file, title: draft.title, publisher, url: final_url, passages: passages.length },
    );
  });

registerReviewCommands(program, records, { admin, print });
registerCollectionCommands(program, records, { admin, print });
registerConsoleCommand(program, { dataDir: () => dataDir(), remote: () => globals().remote, json: () => globals().json === true, wholeNumber });

const feedback = program.command('feedback').description('review anonymous feedback');

feedback
  .command('list')
  .description('list feedback, newest first, with its id and whether it was marked reviewed')
  .option('--category <category>', 'helpful, not_helpful, incorrect, outdated, missing or other')
  .option('--unreviewed', 'only feedback not marked reviewed yet')
  .option('--reviewed', 'only feedback marked reviewed')
  .option('--limit <n>', 'at most this many (default 100)', wholeNumber)
  .action(async (opts: { category?: string; unreviewed?: boolean; reviewed?: boolean; limit?: number }) => {
    if (opts.unreviewed && opts.reviewed) throw new ValidationError('Give --reviewed or --unreviewed, not both.');
    const reviewed = opts.reviewed ? true : opts.unreviewed ? false : undefined;
    const rows = await admin<FeedbackRow[]>({ op: 'feedback.list', category: opts.category as never, reviewed, limit: opts.limit });
    const line = (f: FeedbackRow) =>
      `${f.id}  ${f.created_at}  ${f.category}  ${f.record ?? '-'}  (${f.source})${f.reviewed_at ? `  reviewed ${f.reviewed_at}` : ''}${f.comment ? `  ${f.comment}` : ''}`;
    print(rows.length === 0 ? 'No feedback.' : rows.map(line).join('\n'), rows);
  });

feedback
  .command('review')
  .description('mark feedback reviewed (dealt with); feedback list --unreviewed then leaves it out')
  .argument('<ids...>', 'feedback ids, as feedback list prints them')
  .action(async (ids: string[]) => {
    const result = await admin<FeedbackReviewResult>({ op: 'feedback.review', ids });
    print(`${result.reviewed} marked reviewed${result.already_reviewed ? `, ${result.already_reviewed} already were` : ''}.`, result);
  });

program
  .command('embeddings')
  .description('manage record embeddings')
  .command('backfill')
  .description('embed approved records whose embedding is missing or stale (other model or older text)')
  .option('--force', 're-embed every approved record', false)
  .option('--dry-run', 'only count what would be embedded (and estimate the Bedrock cost)', false)
  .action(async (opts: { force: boolean; dryRun: boolean }) => {
    const result = await admin<BackfillResult>({ op: 'embeddings.backfill', force: opts.force, dry_run: opts.dryRun });
    const cost = result.estimated_cost_usd === undefined ? '' : `, estimated cost USD ${result.estimated_cost_usd.toFixed(6)}`;
    print(
      result.dry_run
        ? `${result.stale} record(s) (${result.passages} passages) would be embedded with ${result.provider} (${result.model})${cost}.`
        : `Embedded ${result.embedded} record(s) (${result.passages} passages) with ${result.provider} (${result.model})${cost}.`,
      result,
    );
  });

const percent = (fraction: number) => `${Math.round(fraction * 1000) / 10}%`;

/** Nonzero counts as `name n, name n`, or `none`. */
function countList(counts: Record<string, number>): string {
  const shown = Object.entries(counts).filter(([, n]) => n > 0);
  return shown.length === 0 ? 'none' : shown.map(([name, n]) => `${name} ${n}`).join(', ');
}

/** The analytics report as a compact text table. */
function analyticsText(r: AnalyticsResult): string {
  const gaps = (list: AnalyticsResult['coverage_gaps']['technologies']) =>
    list.length === 0 ? 'none' : list.map((g) => `${g.name} ${g.no_match}/${g.searches}`).join(', ');
  const days = r.per_day.filter((d) => d.searches > 0);
  const row = (label: string, value: string | number) => `  ${label.padEnd(18)}${value}`;
  const lines = [
    `Last ${r.days} day(s), since ${r.since.slice(0, 10)} (UTC)${r.collection ? `, collection ${r.collection}: searches that included it, feedback about its records` : ''}`,
    row('searches', r.searches),
    ...Object.entries(r.modes).map(([mode, m]) => row(mode, `${String(m.count).padEnd(6)}${percent(m.share)}`)),
    row('degraded rate', percent(r.degraded_rate)),
    '',
    r.per_collection.length === 0 ? 'Searches per collection: none' : 'Searches per collection (a search counts for each collection it included):',
    ...r.per_collection.map((c) => `  ${c.collection.padEnd(18)}${String(c.searches).padEnd(6)}no_match ${c.no_match}`),
    '',
    days.length === 0 ? 'Searches per day: none' : 'Searches per day (days with searches):',
    ...days.map((d) => `  ${d.day}  ${String(d.searches).padStart(5)}   hybrid ${d.hybrid}, keyword_fallback ${d.keyword_fallback}, no_match ${d.no_match}, degraded ${d.degraded}`),
    '',
    'Coverage gaps (no_match/searches):',
    row('technologies', gaps(r.coverage_gaps.technologies)),
    row('topics', gaps(r.coverage_gaps.topics)),
    '',
    r.top_records.length === 0 ? 'Records most shown: none' : 'Records most shown (searches that returned each):',
    ...r.top_records.map((t) => `  ${String(t.shown).padStart(5)}  ${t.slug}  ${t.title}`),
    '',
    `Feedback: ${r.feedback.total} (${countList(r.feedback.by_category)})`,
    ...r.feedback.by_record.map((f) => `  ${f.record}  ${f.total}  (${countList(f.counts)})${f.title ? `  ${f.title}` : ''}`),
  ];
  lines.push('', `Quoted evidence of approved records (newest check): ${countList(r.evidence) || 'no sources'}`);
  if (r.purged > 0) lines.push('', `Purged ${r.purged} search event(s) older than ${r.retention_days} days.`);
  return lines.join('\n');
}

program
  .command('analytics')
  .description('searches per day, mode and collection, degraded rate, coverage gaps, the records most shown and feedback; deletes search events past their retention')
  .option('--days <n>', 'the last N UTC days, today included (default 30)', wholeNumber)
  .option('--collection <name>', 'only searches that included this collection, and feedback about its records')
  .action(async (opts: { days?: number; collection?: string }) => {
    const report = await admin<AnalyticsResult>({ op: 'analytics.report', days: opts.days, collection: opts.collection });
    print(analyticsText(report), report);
  });

function fail(error: unknown): never {
  if (globals().json) {
    // Machine-readable to the end: the error in the envelope shape, on stdout, and exit 1.
    const known = error instanceof AppError ? error : undefined;
    const code = known?.code ?? (error instanceof ConfigError || error instanceof DataDirError ? 'validation_error' : 'internal');
    const message = error instanceof Error ? error.message : 'unexpected failure';
    console.log(JSON.stringify({ error: { code, message, details: known?.details ?? {} } }, null, 2));
    process.exit(1);
  }
  if (error instanceof AppError) {
    console.error(`error: ${error.message}`);
    const problems = (error.details as { problems?: { where: string; problem: string }[] }).problems;
    for (const p of problems ?? []) console.error(`  ${p.where}: ${p.problem}`);
    const issues = (error.details as { issues?: { path: string; message: string }[] }).issues;
    for (const i of issues ?? []) console.error(`  ${i.path || '(command)'}: ${i.message}`);
  } else if (error instanceof ConfigError || error instanceof DataDirError) {
    console.error(`error: ${error.message}`);
  } else {
    const code = (error as NodeJS.ErrnoException)?.code;
    console.error(`error: ${error instanceof Error && code === 'EADDRINUSE' ? `the port is already in use (set ${SETTINGS.port.env} to another one).` : error instanceof Error ? error.message : 'unexpected failure'}`);
  }
  process.exit(1);
}

program.parseAsync(recordVersionArgs(process.argv)).catch(fail);
