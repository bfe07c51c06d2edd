/**
 * Shape rules a reader relies on: no function longer than a screen (split by phase
 * instead), and every source file a comment names exists, so comments do not send
 * a reader to a file that moved.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, sourceFiles } from '../support/source-files.ts';

/** Longest function, in lines from its signature to its closing brace (nested functions included). */
const MAX_FUNCTION_LINES = 80;

const sources = sourceFiles(['lambdas', 'lib', 'bin', 'schema']);
const tests = sourceFiles(['test']);

function functionName(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText();
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)';
}

describe('code shape', () => {
  it(`no function in lambdas/, lib/, bin/ or schema/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of sources) {
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
          const start = file.ast.getLineAndCharacterOfPosition(node.getStart()).line;
          const end = file.ast.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (end - start + 1 > MAX_FUNCTION_LINES) long.push(`${file.path}:${start + 1} ${functionName(node)} (${end - start + 1} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(file.ast);
    }
    expect(long).toEqual([]);
  });

  it('every source file a comment names exists', () => {
    const missing: string[] = [];
    for (const file of [...sources, ...tests]) {
      const comments = file.text.match(/\/\*[\s\S]*?\*\/|\/\/.*$/gm) ?? [];
      for (const comment of comments) {
        for (const match of comment.matchAll(/(?<![\w./*-])((?:[\w-]+\/)*[\w-]+\.(?:ts|mjs|sql))\b/g)) {
          const name = match[1]!;
          if (!fileExists(name)) missing.push(`${file.path}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

const allPaths = [...sources, ...tests].map((f) => f.path);

/** Names comments use that are not files of the repository. */
const NOT_REPOSITORY_FILES = new Set([
  'index.mjs', // the entry file esbuild writes into each Lambda bundle
  'NNN_name.sql', // the migration file pattern, spelled out
  '002_more.sql', // a migration a test writes into a temporary folder
]);

/** A repository path, or a path or file name that ends some source file's path. */
function fileExists(name: string): boolean {
  if (NOT_REPOSITORY_FILES.has(name)) return true;
  if (existsSync(join(REPO_ROOT, name))) return true;
  return allPaths.some((path) => path === name || path.endsWith(`/${name}`)) || existsSync(join(REPO_ROOT, 'schema', name));
}
