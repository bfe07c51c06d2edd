/**
 * `npm run bench:verify -- [--runs N] [--delay-ms 100] [--sources N] [--out FILE] [--quick] [--docs]`
 *
 * How long `records verify` takes over the whole starter corpus: every source of
 * `guidance/` (243 excerpts) checked against a local HTTPS server that answers
 * each page after `--delay-ms` (100 ms by default), under the source's own host
 * name (an injected resolver sends every name to the server; its self-signed
 * certificate names them all), so the per-host politeness limit works as it
 * would against the real hosts. Each page holds its excerpt inside ordinary page
 * furniture, so every check runs the whole pipeline: fetch, text extraction,
 * normalising, the search, and storing the result in PGlite.
 *
 * Reports the median of `--runs` runs, the slowest run, checks per second and the
 * load average, and writes the report as JSON (by default under `.chatctx/`); `--docs`
 * also writes it to docs/bench/verify.json and docs/testing.md's table rendered from it.
 * `--quick` (the benchmark test): one run of the first 20 sources, pages answered at
 * once; it checks that the benchmark runs, not how fast. Its temporary folder (the
 * certificate) is gone before the first check.
 */
import { Command } from 'commander';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PgliteSql } from '../../lambdas/storage/pglite-sql.ts';
import { migrate } from '../../lambdas/storage/migrations.ts';
import { readRecordFiles } from '../../lambdas/records/record-files.ts';
import { verifySources } from '../../lambdas/records/source-verification.ts';
import { UntrustedFetcher } from '../../lambdas/streams/untrusted-fetch.ts';
import { VERIFY_LIMITS } from '../../lambdas/admin/admin-operations.ts';
import { machine, recordInDocs, renderVerify } from './docs-report.mjs';

const opts = new Command('bench:verify')
  .option('--runs <n>', 'runs (the median is reported)', '3')
  .option('--delay-ms <ms>', 'how long the server waits before answering each page', '100')
  .option('--sources <n>', 'check only the first N sources (default: all)')
  .option('--out <file>', 'where the JSON report goes', '.chatctx/bench/verify.json')
  .option('--quick', 'one run of 20 sources with no page delay: checks that the benchmark runs')
  .option('--docs', "also write docs/bench/verify.json and docs/testing.md's table from it")
  .parse()
  .opts<{ runs: string; delayMs: string; sources?: string; out: string; quick?: boolean; docs?: boolean }>();

const RUNS = opts.quick ? 1 : Number(opts.runs);
const DELAY_MS = opts.quick ? 0 : Number(opts.delayMs);
const LIMIT = opts.quick ? 20 : opts.sources === undefined ? Infinity : Number(opts.sources);
if (!(Number.isInteger(RUNS) && RUNS >= 1 && DELAY_MS >= 0 && LIMIT >= 1)) {
  console.error(`bench:verify: --runs and --sources take positive whole numbers, --delay-ms a number of ms (got ${opts.runs}, ${opts.sources}, ${opts.delayMs})`);
  process.exit(2);
}
if (opts.quick && opts.docs) {
  console.error('bench:verify: --docs records a full run; it cannot be combined with --quick');
  process.exit(2);
}
const measuredOn = machine();

const records = await readRecordFiles(resolve('guidance'));
const sources = records
  .flatMap((r) => r.sources.filter((s) => s.evidence_excerpt).map((s) => ({ url: s.url, excerpt: s.evidence_excerpt!, slugs: [r.slug] })))
  .slice(0, LIMIT);
const hosts = [...new Set(sources.map((s) => new URL(s.url).hostname))];

const work = await mkdtemp(join(tmpdir(), 'chatctx-bench-verify-'));
const [keyPath, certPath] = [join(work, 'key.pem'), join(work, 'cert.pem')];
// The folder only holds the certificate: it goes as soon as both files are read, or when openssl fails (the error then exits 1).
const [key, cert] = await (async () => {
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=bench', '-addext', `subjectAltName=${hosts.map((h) => `DNS:${h}`).join(',')}`, '-days', '1', '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' });
    return [await readFile(keyPath), await readFile(certPath)];
  } finally {
    await rm(work, { recursive: true, force: true });
  }
})();
/** Every excerpt quoted from a page, by host and path: several records quote the same page. */
const pages = new Map<string, string[]>();
for (const s of sources) {
  const key = `${new URL(s.url).hostname}${new URL(s.url).pathname}`;
  pages.set(key, [...(pages.get(key) ?? []), s.excerpt]);
}
const server = createServer({ key, cert }, (req, res) => {
  const excerpts = pages.get(`${(req.headers.host ?? '').split(':')[0]}${new URL(req.url ?? '/', 'https://x').pathname}`);
  setTimeout(() => {
    if (!excerpts) return void res.writeHead(404).end();
    const quoted = excerpts.map((excerpt) => `<p>${escapeHtml(excerpt).replace(/\s*…\s*/g, ' </p><p> ')}</p>`).join('<p>Between the quotes.</p>');
    const body = `<!doctype html><html><head><title>Page</title><script>var t = 1;</script></head><body><nav>Home · Docs · Blog</nav><main><h1>Section</h1><p>${'Context before the quote. '.repeat(40)}</p>${quoted}<p>${'Context after the quote. '.repeat(40)}</p></main><footer>Footer</footer></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  }, DELAY_MS);
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
const port = (server.address() as AddressInfo).port;
const local = sources.map((s) => {
  const url = new URL(s.url);
  url.port = String(port);
  return { ...s, url: url.href };
});
const fetcher = new UntrustedFetcher({ resolve: async () => ['127.0.0.1'], allowAddress: () => true, ca: cert });

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const runs: { seconds: number; verified: number; other: number; load1: number }[] = [];
for (let run = 0; run < RUNS; run++) {
  const sql = await PgliteSql.open();
  await migrate(sql);
  const started = performance.now();
  const results = await verifySources(sql, fetcher, local, VERIFY_LIMITS);
  const seconds = (performance.now() - started) / 1000;
  runs.push({ seconds, verified: results.filter((r) => r.status === 'verified').length, other: results.filter((r) => r.status !== 'verified').length, load1: loadavg()[0]! });
  await sql.close();
}
server.close();

const sorted = [...runs].sort((a, b) => a.seconds - b.seconds);
const median = sorted[Math.floor(sorted.length / 2)]!;
const report = {
  ...measuredOn,
  quick: opts.quick ?? false,
  sources: local.length,
  hosts: hosts.length,
  delay_ms: DELAY_MS,
  runs,
  median_seconds: Math.round(median.seconds * 100) / 100,
  slowest_seconds: Math.round(sorted.at(-1)!.seconds * 100) / 100,
  checks_per_second: Math.round((local.length / median.seconds) * 10) / 10,
  verified: median.verified,
  load_average: loadavg().map((l) => Math.round(l * 100) / 100),
};
console.log(renderVerify(report));
await mkdir(dirname(resolve(opts.out)), { recursive: true });
await writeFile(resolve(opts.out), JSON.stringify(report, null, 2) + '\n');
if (opts.docs) console.log(`wrote ${recordInDocs('verify', report).join(' and ')}`);
