/**
 * The one-way layers of `lambdas/`, as the layer table in docs/architecture.md writes
 * them: a folder imports only from folders in lower layers (and from `schema/`),
 * `ports/` holds nothing but types, no file takes part in an import cycle, and the
 * SDKs, PGlite and the encoder are imported only by the adapters that wrap them.
 * A change that breaks a rule fails here with the file and line that broke it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, lambdaFolder, sourceFiles, type SourceFile } from '../support/source-files.ts';

/** Folder → layer number, from the layer table in docs/architecture.md. */
function readLayers(): Map<string, number> {
  const section = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
  if (!section.includes('| layer |')) throw new Error('docs/architecture.md has no layer table');
  const layers = new Map<string, number>();
  for (const row of section.split('\n')) {
    const match = /^\|\s*(\d+)\s*\|([^|]+)\|/.exec(row);
    if (!match) continue;
    for (const folder of match[2]!.matchAll(/`([a-z-]+)\/`/g)) layers.set(folder[1]!, Number(match[1]));
  }
  return layers;
}

const layers = readLayers();
const files = sourceFiles(['lambdas']);
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
    const graph = new Map(files.map((f) => [f.path, f.imports.filter((i) => i.target?.startsWith('lambdas/')).map((i) => i.target!)]));
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (node: string) => {
      state.set(node, 'open');
      stack.push(node);
      for (const next of graph.get(node) ?? []) {
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(node, 'done');
    };
    for (const node of graph.keys()) if (!state.has(node)) visit(node);
    expect(cycles).toEqual([]);
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
