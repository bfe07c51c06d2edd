// `npm run bench:search-bundle [-- --runs N] [--out FILE] [--quick] [--docs]`: what the search function's cold
// start pays to load its bundle, with the tokenizer shipped beside the bundle and read
// at first use (as deployed) against the tokenizer inlined in the bundle (what a
// literal `import('gpt-tokenizer')` gives). Both are built with the stack's own
// esbuild options (`lib/bundling.ts`) and hooks (`lib/mcp-functions.ts`); each run
// imports a bundle in a fresh Node process, the variants taking turns. For the split
// bundle it also times the first use of the tokenizer, the cost moved out of the
// cold start. Prints a table and writes bench-results/search-bundle.json (or `--out`);
// `--docs` also writes docs/bench/search-bundle.json and docs/aws.md's table from it.
// Each import is one sample: the median of `--runs` (9) of them is reported.
// `--quick` (the benchmark test) imports each bundle once: it checks the benchmark runs.
import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { BUNDLING_OPTIONS, PROJECT_ROOT } from '../../lib/bundling.ts';
import { BUNDLED_FILES, FUNCTION_ENTRIES } from '../../lib/mcp-functions.ts';
import { machine, recordInDocs, renderSearchBundle } from './docs-report.mjs';

const args = (() => {
  try {
    return parseArgs({ options: { runs: { type: 'string' }, out: { type: 'string' }, quick: { type: 'boolean' }, docs: { type: 'boolean' } }, strict: true }).values;
  } catch (error) {
    console.error(`search-bundle: ${(error as Error).message}`);
    process.exit(2);
  }
})();
if (args.quick && args.docs) {
  console.error('search-bundle: --docs records a full run; it cannot be combined with --quick');
  process.exit(2);
}
const runs = args.quick ? 1 : Number(args.runs ?? 9);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`search-bundle: --runs takes a positive whole number, not ${args.runs}`);
  process.exit(2);
}
const out = resolve(args.out ?? join(PROJECT_ROOT, 'bench-results', 'search-bundle.json'));
const work = mkdtempSync(join(tmpdir(), 'chatctx-search-bundle-'));

/** Puts back the literal import the bundler follows: the tokenizer inlined, as before the split. */
const inlineTokenizer: Plugin = {
  name: 'inline-tokenizer',
  setup(b) {
    b.onLoad({ filter: /retrieval[\\/]token-budget\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replace('import(TOKENIZER_MODULE)', "import('gpt-tokenizer')"),
      loader: 'ts',
    }));
  },
};

async function bundle(variant: 'split' | 'inline'): Promise<string> {
  const dir = join(work, variant);
  const file = join(dir, 'index.mjs');
  await build({
    entryPoints: [join(PROJECT_ROOT, FUNCTION_ENTRIES.searchKnowledge)],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: BUNDLING_OPTIONS.target,
    format: BUNDLING_OPTIONS.format,
    minify: BUNDLING_OPTIONS.minify,
    mainFields: [...BUNDLING_OPTIONS.mainFields],
    banner: { js: BUNDLING_OPTIONS.banner },
    logLevel: 'error',
    plugins: variant === 'inline' ? [inlineTokenizer] : [],
  });
  if (variant === 'split') for (const command of BUNDLED_FILES.searchKnowledge.afterBundling(PROJECT_ROOT, dir)) execSync(command, { shell: '/bin/sh', stdio: 'pipe' });
  return file;
}

/** Loads the bundle in a fresh process; then, for the split one, the tokenizer as the bundle would at first use. */
function load(file: string, firstUse: boolean): { load_ms: number; first_use_ms?: number } {
  const probe = join(file, '..', 'probe.mjs');
  writeFileSync(
    probe,
    `let t = performance.now(); await import('./index.mjs'); const load_ms = performance.now() - t;
     let first_use_ms; if (${firstUse}) { t = performance.now(); (await import('gpt-tokenizer')).countTokens('x'); first_use_ms = performance.now() - t; }
     process.stdout.write(JSON.stringify({ load_ms, first_use_ms }));`,
  );
  return JSON.parse(execFileSync(process.execPath, [probe], { cwd: tmpdir(), env: {}, encoding: 'utf8' }));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  const measuredOn = machine();
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  const files = { split: await bundle('split'), inline: await bundle('inline') };
  const samples = { split: [] as number[], inline: [] as number[], firstUse: [] as number[] };
  for (let i = 0; i < runs; i += 1) {
    const split = load(files.split, true);
    samples.split.push(split.load_ms);
    samples.firstUse.push(split.first_use_ms!);
    samples.inline.push(load(files.inline, false).load_ms);
  }
  const kib = (file: string) => Math.round(statSync(file).size / 1024);
  const tokenizerKib = Math.round(statSync(join(files.split, '..', 'node_modules', 'gpt-tokenizer', 'index.mjs')).size / 1024);
  const result = {
    ...measuredOn,
    quick: args.quick ?? false,
    load_average_start: loadAtStart,
    load_average: Number(loadavg()[0]!.toFixed(2)),
    runs,
    inline: { bundle_kib: kib(files.inline), load_ms: Math.round(median(samples.inline)) },
    split: { bundle_kib: kib(files.split), tokenizer_kib: tokenizerKib, load_ms: Math.round(median(samples.split)), first_use_ms: Math.round(median(samples.firstUse)) },
  };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  console.log(renderSearchBundle(result));
  if (args.docs) console.log(`wrote ${recordInDocs('search-bundle', result).join(' and ')}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
