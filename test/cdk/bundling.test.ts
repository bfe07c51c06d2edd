/**
 * Builds every Lambda entry with the stack's own esbuild options (`lib/bundling.ts`,
 * mapped the way aws-lambda-nodejs passes them to esbuild), runs the same
 * after-bundling copy commands, and loads the bundles in Node: what would break in
 * the deployed functions (an ESM/CommonJS `require` mix-up, a data file missing from
 * the bundle, the local runtime's heavy dependencies dragged in) breaks here.
 */
import { SETTINGS } from '../../lambdas/config/settings.ts';
import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLING_OPTIONS, PROJECT_ROOT } from '../../lib/bundling.ts';
import { BUNDLED_FILES, FUNCTION_ENTRIES } from '../../lib/mcp-functions.ts';

type FunctionName = keyof typeof FUNCTION_ENTRIES;
const NAMES = Object.keys(FUNCTION_ENTRIES) as FunctionName[];

/** The esbuild options NodejsFunction derives from our BundlingOptions. */
function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: BUNDLING_OPTIONS.target,
    format: BUNDLING_OPTIONS.format,
    minify: BUNDLING_OPTIONS.minify,
    sourcemap: BUNDLING_OPTIONS.sourceMap,
    sourcesContent: BUNDLING_OPTIONS.sourcesContent,
    mainFields: [...BUNDLING_OPTIONS.mainFields],
    banner: { js: BUNDLING_OPTIONS.banner },
    external: [...BUNDLING_OPTIONS.externalModules],
    metafile: true,
    logLevel: 'silent',
  };
}

const workDir = mkdtempSync(join(tmpdir(), 'chatctx-bundles-'));
const bundles = {} as Record<FunctionName, { dir: string; file: string; metafile: Metafile }>;

beforeAll(async () => {
  await Promise.all(
    NAMES.map(async (name) => {
      const dir = join(workDir, name);
      const file = join(dir, 'index.mjs');
      const result = await build(esbuildOptions(FUNCTION_ENTRIES[name], file));
      const hooks = name in BUNDLED_FILES ? BUNDLED_FILES[name as keyof typeof BUNDLED_FILES] : undefined;
      for (const command of hooks?.afterBundling(PROJECT_ROOT, dir) ?? []) execSync(command, { shell: '/bin/sh', stdio: 'pipe' });
      bundles[name] = { dir, file, metafile: result.metafile! };
    }),
  );
}, 300_000);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/**
 * Imports a bundle in a fresh `node` process (Node's own ESM loader, as in Lambda, not
 * vitest's), calls `handler` with each event, and returns the JSON results.
 */
function invokeInNode(name: FunctionName, events: unknown[] = []): { handlerType: string; results: unknown[]; loadMs: number } {
  const script = `
    const started = performance.now();
    const m = await import(${JSON.stringify(pathToFileURL(bundles[name].file).href)});
    const loadMs = performance.now() - started;
    const results = [];
    for (const event of JSON.parse(process.env.EVENTS)) results.push(await m.handler(event, {}));
    process.stdout.write(JSON.stringify({ handlerType: typeof m.handler, results, loadMs }));`;
  const output = execFileSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
    // No AWS credentials or region: nothing in these calls may reach AWS.
    env: { PATH: process.env.PATH, EVENTS: JSON.stringify(events), [SETTINGS.guestDailyLimit.env]: '77' },
    cwd: bundles[name].dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  return JSON.parse(output) as { handlerType: string; results: unknown[]; loadMs: number };
}

function apiEvent(method: string, path: string): APIGatewayProxyEvent {
  const host = 'abc123.execute-api.eu-west-1.amazonaws.com';
  return {
    httpMethod: method,
    path,
    resource: path,
    headers: { Host: host },
    multiValueHeaders: { Host: [host] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { stage: 'v1', domainName: host, path: `/v1${path}`, identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent;
}

describe('Lambda bundles', () => {
  it.each(NAMES)('%s bundles the AWS SDK it uses instead of expecting the runtime copy', (name) => {
    const inputs = Object.keys(bundles[name].metafile.inputs);
    const outputs = Object.values(bundles[name].metafile.outputs);
    const imports = outputs.flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path));
    // Only Node built-ins remain outside the bundle.
    for (const path of imports) expect(builtinModules, `${name} imports ${path} at run time`).toContain(path.replace(/^node:/, ''));
    if (name !== 'site') expect(inputs.some((input) => input.includes('node_modules/@aws-sdk/'))).toBe(true);
  });

  it.each(NAMES)('%s leaves out the local sentence encoder and the local server', (name) => {
    const inputs = Object.keys(bundles[name].metafile.inputs);
    for (const heavy of ['@energetic-ai', '@tensorflow', 'lambdas/local/', 'bin/eval/']) {
      expect(inputs.filter((input) => input.includes(heavy)), `${name} pulls in ${heavy}`).toEqual([]);
    }
    // A cold-start budget, not a Lambda limit: the tool bundles are ~4 MB, mostly gpt-tokenizer's encodings.
    expect(statSync(bundles[name].file).size).toBeLessThan(8 * 1024 * 1024);
  });

  it.each(NAMES)('%s leaves out PGlite', (name) => {
    const inputs = Object.keys(bundles[name].metafile.inputs);
    expect(inputs.filter((input) => input.includes('@electric-sql/pglite'))).toEqual([]);
  });

  it.each(NAMES)('%s loads as an ES module in Node and exports a handler', (name) => {
    expect(invokeInNode(name).handlerType).toBe('function');
  });

  it('searchKnowledge parses no tokenizer at load, and finds the one shipped beside it at first use', () => {
    const inputs = Object.keys(bundles.searchKnowledge.metafile.inputs);
    expect(inputs.filter((input) => input.includes('gpt-tokenizer'))).toEqual([]);
    // Resolved as the bundle's own code resolves it: from the bundle's folder, by Node's ESM loader.
    const probe = join(bundles.searchKnowledge.dir, 'probe.mjs');
    writeFileSync(probe, "const m = await import('gpt-tokenizer'); process.stdout.write(JSON.stringify({ where: import.meta.resolve('gpt-tokenizer'), tokens: m.countTokens('Put a deadline on every outbound call.') }));");
    const output = JSON.parse(execFileSync(process.execPath, [probe], { cwd: tmpdir(), env: { PATH: process.env.PATH }, encoding: 'utf8' })) as { where: string; tokens: number };
    rmSync(probe);
    expect(output.where).toBe(pathToFileURL(join(bundles.searchKnowledge.dir, 'node_modules/gpt-tokenizer/index.mjs')).href);
    expect(output.tokens).toBeGreaterThan(5);
  });

  it('migrate carries every schema/*.sql file in ./schema', () => {
    const expected = readdirSync(join(PROJECT_ROOT, 'schema')).filter((file) => file.endsWith('.sql')).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(readdirSync(join(bundles.migrate.dir, 'schema')).sort()).toEqual(expected);
  });

  it('migrate answers a stack-deletion event without touching the database', () => {
    const { results } = invokeInNode('migrate', [{ RequestType: 'Delete', PhysicalResourceId: 'chatctx-schema', ResourceProperties: {} }]);
    expect(results).toEqual([{ PhysicalResourceId: 'chatctx-schema' }]);
  });

  it('site serves the documentation files from inside its bundle, naming the stage URL and the configured guest limit', () => {
    const paths = ['/llms.txt', '/docs.md', '/agent-instructions.md', '/nope'];
    const { results } = invokeInNode('site', paths.map((path) => apiEvent('GET', path)));
    const [llms, docs, instructions, missing] = results as APIGatewayProxyResult[];
    for (const [path, result] of [['/llms.txt', llms], ['/docs.md', docs], ['/agent-instructions.md', instructions]] as const) {
      expect(result?.statusCode, path).toBe(200);
      expect(result?.body.length, path).toBeGreaterThan(100);
    }
    expect(llms?.body).toContain('https://abc123.execute-api.eu-west-1.amazonaws.com/v1/mcp');
    // The guest limit comes from the same setting the stack sets for the function.
    expect(docs?.body).toContain('77 tool calls per client IP');
    expect(missing?.statusCode).toBe(404);
  });

  // Reported, not asserted (timings belong in benchmarks): the closing note and docs/aws.md
  // quote this table; bench-results/bundles.json keeps it.
  it('reports each bundle\'s size and its load time in a fresh Node process', () => {
    const rows = NAMES.map((name) => {
      const { handlerType, loadMs } = invokeInNode(name);
      expect(handlerType).toBe('function');
      return { function: name, bytes: statSync(bundles[name].file).size, load_ms: Math.round(loadMs) };
    });
    mkdirSync(join(PROJECT_ROOT, 'bench-results'), { recursive: true });
    writeFileSync(join(PROJECT_ROOT, 'bench-results', 'bundles.json'), JSON.stringify({ node: process.version, rows }, null, 2) + '\n');
    console.log(['| function | bundle | load |', '|---|---|---|', ...rows.map((r) => `| ${r.function} | ${(r.bytes / 1024).toFixed(0)} KiB | ${r.load_ms} ms |`)].join('\n'));
  });
});
