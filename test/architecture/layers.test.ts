/**
 * The one-way layers of `lambdas/`, as the layer table in docs/architecture.md writes
 * them: a folder imports only from folders in lower layers (and from `schema/`),
 * `ports/` holds nothing but types, no file takes part in an import cycle, and the
 * SDKs, PGlite and the encoder are imported only by the adapters that wrap them.
 * `bin/` may import all of that, nothing but the tests imports `bin/`, and its folders
 * keep the one-way order of their own table there.
 * A change that breaks a rule fails here with the file and line that broke it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, binFolder, lambdaFolder, sourceFiles, type SourceFile } from '../support/source-files.ts';

const architecture = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');

/** Folder → layer number, from the layer table in docs/architecture.md. */
function readLayers(): Map<string, number> {
  if (!architecture.includes('| layer |')) throw new Error('docs/architecture.md has no layer table');
  const layers = new Map<string, number>();
  for (const row of architecture.split('\n')) {
    const match = /^\|\s*(\d+)\s*\|([^|]+)\|/.exec(row);
    if (!match) continue;
    for (const folder of match[2]!.matchAll(/`([a-z-]+)\/`/g)) layers.set(folder[1]!, Number(match[1]));
  }
  return layers;
}

/** `bin/` folder → the other folders of `bin/` it may import from, from the `bin/` table in docs/architecture.md. */
function readBinOrder(): Map<string, string[]> {
  const lines = architecture.split('\n');
  const header = lines.findIndex((line) => line.startsWith('| folder of `bin/` |'));
  if (header < 0) throw new Error('docs/architecture.md has no table of the folders of bin/');
  const order = new Map<string, string[]>();
  const folderNames = (cell: string) => [...cell.matchAll(/`(bin\/(?:[a-z-]+\/)?)`/g)].map((m) => m[1]!);
  for (const row of lines.slice(header + 2)) {
    if (!row.startsWith('|')) break;
    const [folder, allowed] = row.split('|').slice(1, 3).map(folderNames);
    if (folder?.length !== 1) throw new Error(`docs/architecture.md: a row of the bin/ table names no single folder: ${row}`);
    order.set(folder[0]!, allowed ?? []);
  }
  return order;
}

/** Every cycle in a graph of name → names it points to, each as `a → b → a`. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** Imports between the given files only, as a graph for `cycles`. */
function importGraph(among: readonly SourceFile[], root: string): Map<string, string[]> {
  return new Map(among.map((f) => [f.path, f.imports.filter((i) => i.target?.startsWith(root)).map((i) => i.target!)]));
}

const layers = readLayers();
const files = sourceFiles(['lambdas']);
const binOrder = readBinOrder();
const binFiles = sourceFiles(['bin']);
const where = (file: SourceFile, line: number) => `${file.path}:${line}`;

describe('layers', () => {
  it('docs/architecture.md assigns every folder of lambdas/ to exactly one layer', () => {
    const folders = [...new Set(files.map((f) => lambdaFolder(f.path)!))].sort();
    expect(folders.filter((folder) => !layers.has(folder))).toEqual([]);
    expect([...layers.keys()].filter((folder) => !folders.includes(folder))).toEqual([]);
  });

  it('no import climbs a layer or crosses into a folder of the same layer', () => {
    const climbing: string[] = [];
    for (const file of files) {
      const from = lambdaFolder(file.path)!;
      for (const imp of file.imports) {
        const to = imp.target ? lambdaFolder(imp.target) : undefined;
        if (!to || to === from) continue;
        if (layers.get(to)! >= layers.get(from)!) climbing.push(`${where(file, imp.line)} ${from} (${layers.get(from)}) → ${to} (${layers.get(to)})`);
      }
    }
    expect(climbing).toEqual([]);
  });

  it('lambdas/ imports nothing from bin/, lib/ or test/', () => {
    const outward = files.flatMap((file) =>
      file.imports.filter((imp) => imp.target && /^(bin|lib|test)\//.test(imp.target)).map((imp) => where(file, imp.line)),
    );
    expect(outward).toEqual([]);
  });

  it('ports/ imports nothing but types defined in ports/', () => {
    const ports = files.filter((f) => lambdaFolder(f.path) === 'ports');
    expect(ports.length).toBeGreaterThan(0);
    const bad = ports.flatMap((file) =>
      file.imports.filter((imp) => !imp.typeOnly || !imp.target?.startsWith('lambdas/ports/')).map((imp) => `${where(file, imp.line)} ${imp.specifier}`),
    );
    expect(bad).toEqual([]);
  });

  it('no file of lambdas/ takes part in an import cycle', () => {
    expect(cycles(importGraph(files, 'lambdas/'))).toEqual([]);
  });
});

describe('bin/', () => {
  /** Every file under bin/, repository-relative: the sources this test reads and any other kind. */
  const everyFile = readdirSync(join(REPO_ROOT, 'bin'), { recursive: true, encoding: 'utf8' })
    .map((path) => `bin/${path}`)
    .filter((path) => statSync(join(REPO_ROOT, path)).isFile());

  it('docs/architecture.md names every folder of bin/, and its order runs one way', () => {
    const folders = [...new Set(everyFile.map((path) => binFolder(path)!))].sort();
    expect(folders.filter((folder) => !binOrder.has(folder))).toEqual([]);
    expect([...binOrder.keys()].filter((folder) => !folders.includes(folder))).toEqual([]);
    expect([...binOrder.values()].flat().filter((folder) => !binOrder.has(folder))).toEqual([]);
    expect(cycles(binOrder)).toEqual([]);
  });

  it('every file of bin/ is a source this test reads, or a shell script, which imports nothing of ours', () => {
    const read = new Set(binFiles.map((f) => f.path));
    expect(everyFile.filter((path) => !read.has(path) && !path.endsWith('.sh'))).toEqual([]);
  });

  it('a file of bin/ imports from its own folder and the folders of bin/ its row names, never from test/', () => {
    const crossing: string[] = [];
    for (const file of binFiles) {
      const from = binFolder(file.path)!;
      for (const imp of file.imports) {
        if (imp.target?.startsWith('test/')) crossing.push(`${where(file, imp.line)} ${imp.specifier}: bin/ never imports test/`);
        const to = imp.target ? binFolder(imp.target) : undefined;
        if (!to || to === from || binOrder.get(from)?.includes(to)) continue;
        crossing.push(`${where(file, imp.line)} ${imp.specifier}: ${from} does not import from ${to}`);
      }
    }
    expect(crossing).toEqual([]);
  });

  it('lib/ and schema/ import nothing from bin/ either', () => {
    const inward = sourceFiles(['lib', 'schema']).flatMap((file) =>
      file.imports.filter((imp) => imp.target?.startsWith('bin/')).map((imp) => `${where(file, imp.line)} ${imp.specifier}`),
    );
    expect(inward).toEqual([]);
  });

  it('no file of bin/ takes part in an import cycle', () => {
    expect(binFiles.length).toBeGreaterThan(0);
    expect(cycles(importGraph(binFiles, 'bin/'))).toEqual([]);
  });
});

describe('adapters', () => {
  /** Which folders may import a package: the adapters that wrap it, and the runtime glue. */
  const OWNERS: [RegExp, readonly string[]][] = [
    [/^@aws-sdk\/client-rds-data$/, ['storage']],
    [/^@aws-sdk\/client-dynamodb$/, ['quota']],
    [/^@aws-sdk\/client-secrets-manager$/, ['secrets', 'aws']],
    [/^@aws-sdk\/client-bedrock-runtime$/, ['embeddings']],
    [/^@aws-sdk\/client-bedrock-agent-runtime$/, ['embeddings']],
    [/^@aws-sdk\/client-lambda$/, ['aws']],
    [/^@aws-sdk\/client-sns$/, ['aws']],
    [/^@aws-sdk\//, []],
    [/^@electric-sql\//, ['storage']],
    [/^@energetic-ai\//, ['embeddings']],
    [/^@aws-lambda-powertools\//, ['aws', 'handlers']],
    [/^@middy\//, ['aws', 'handlers']],
    [/^aws-lambda$/, ['aws', 'handlers']],
    [/^@hono\//, ['local']],
  ];

  it('the AWS SDK clients, PGlite, the encoder and the Lambda libraries are imported only by their adapters', () => {
    const misplaced: string[] = [];
    for (const file of files) {
      const folder = lambdaFolder(file.path)!;
      for (const imp of file.imports) {
        const owner = OWNERS.find(([pattern]) => pattern.test(imp.specifier));
        if (owner && !owner[1].includes(folder)) misplaced.push(`${where(file, imp.line)} ${imp.specifier}`);
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('lib/ (the CDK app) takes names and constants from lambdas/, never a runtime or an entry', () => {
    const reaching = sourceFiles(['lib']).flatMap((file) =>
      file.imports
        .filter((imp) => imp.target && ['handlers', 'aws', 'local'].includes(lambdaFolder(imp.target) ?? ''))
        .map((imp) => `${file.path}:${imp.line} ${imp.specifier}`),
    );
    expect(reaching).toEqual([]);
  });
});
