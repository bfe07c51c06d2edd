/**
 * The project's own source files and what each imports, read with the TypeScript
 * parser (static imports, re-exports and dynamic `import()`), for the tests that
 * hold the code to its architecture.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './local-server.ts';

export { REPO_ROOT };

export interface Import {
  /** The specifier as written. */
  readonly specifier: string;
  /** Repository-relative path of the imported file, for relative specifiers. */
  readonly target?: string;
  /** `import type` / `export type`: erased at run time. */
  readonly typeOnly: boolean;
  readonly line: number;
}

export interface SourceFile {
  /** Repository-relative, with forward slashes. */
  readonly path: string;
  readonly text: string;
  readonly ast: ts.SourceFile;
  readonly imports: readonly Import[];
}

// `.d.mts`: the types of a plain-JavaScript module that TypeScript imports.
const SOURCE = /\.(ts|mts|mjs|js)$/;

/** Every source file under the given repository folders (no node_modules, no tests unless asked). */
export function sourceFiles(folders: readonly string[]): SourceFile[] {
  const paths: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SOURCE.test(name)) paths.push(path);
    }
  };
  for (const folder of folders) walk(join(REPO_ROOT, folder));
  return paths.sort().map(parse);
}

function parse(absolute: string): SourceFile {
  const text = readFileSync(absolute, 'utf8');
  const ast = ts.createSourceFile(absolute, text, ts.ScriptTarget.ES2022, true);
  const imports: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteral(specifier)) return;
    const value = specifier.text;
    const target = value.startsWith('.') ? relative(REPO_ROOT, resolve(dirname(absolute), value)) : undefined;
    imports.push({ specifier: value, target, typeOnly, line: ast.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, node.importClause?.isTypeOnly ?? false);
    else if (ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal as ts.Expression, true);
    ts.forEachChild(node, visit);
  };
  visit(ast);
  return { path: relative(REPO_ROOT, absolute), text, ast, imports };
}

/** `lambdas/<folder>/…` → `<folder>`; anything else → undefined. */
export function lambdaFolder(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'lambdas' && parts.length > 2 ? parts[1] : undefined;
}

/** `bin/<folder>/…` → `bin/<folder>/`; a file at the top of `bin/` → `bin/`; anything else → undefined. */
export function binFolder(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'bin') return undefined;
  return parts.length > 2 ? `bin/${parts[1]}/` : 'bin/';
}
