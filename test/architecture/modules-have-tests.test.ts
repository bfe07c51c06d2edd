/**
 * Every module of `lambdas/` has a test a reader can find: a test file imports it
 * at run time, or a unit test or contract suite carries its name (a test of the
 * same name elsewhere may be about a feature, not the module), or the "Covered
 * elsewhere" table in docs/testing.md names the tests that run it and says how.
 * A new module without a test fails here by name, and so does a row that
 * outlived its module or its tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, sourceFiles } from '../support/source-files.ts';

interface Row {
  readonly module: string;
  readonly tests: readonly string[];
}

/** The rows of the "Covered elsewhere" table in docs/testing.md. */
function readCoveredElsewhere(): Row[] {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'testing.md'), 'utf8');
  const section = /\n#+ Covered elsewhere\n\n((?:\|.*\n)+)/.exec(doc)?.[1];
  if (!section) throw new Error('docs/testing.md has no "Covered elsewhere" table');
  return section
    .split('\n')
    .map((line) => /^\|\s*`(lambdas\/[^`]+)`\s*\|([^|]*)\|/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ module: match[1]!, tests: [...match[2]!.matchAll(/`(test\/[^`]+)`/g)].map((t) => t[1]!) }));
}

const moduleName = (path: string) => basename(path).replace(/\.(ts|mjs)$/, '');
const modules = sourceFiles(['lambdas']).map((file) => file.path);
const tests = sourceFiles(['test']).filter((file) => /\.(test|contract)\.ts$/.test(file.path) && !file.path.startsWith('test/cdk/'));
const imported = new Set(tests.flatMap((file) => file.imports.filter((imp) => !imp.typeOnly && imp.target).map((imp) => imp.target!)));
const testNames = new Set(tests.filter((file) => /^test\/(unit|contracts)\/[^/]+\.test\.ts$/.test(file.path)).map((file) => basename(file.path, '.test.ts')));
const namedByTest = (path: string) => imported.has(path) || testNames.has(moduleName(path));
const rows = readCoveredElsewhere();

describe('every module of lambdas/ has a test', () => {
  it('finds the modules and the table', () => {
    expect(modules.length).toBeGreaterThan(100);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('has every module imported or named by a test, or listed under "Covered elsewhere" in docs/testing.md', () => {
    const listed = new Set(rows.map((row) => row.module));
    expect(modules.filter((path) => !namedByTest(path) && !listed.has(path))).toEqual([]);
  });

  it('lists only modules that exist and that no test imports or names', () => {
    const stale = rows.flatMap((row) => {
      if (!existsSync(join(REPO_ROOT, row.module))) return [`${row.module}: no such file`];
      return namedByTest(row.module) ? [`${row.module}: a test imports or names it, so its row can go`] : [];
    });
    expect(stale).toEqual([]);
  });

  it('names at least one test for each listed module, every one of them a file that exists', () => {
    expect(rows.filter((row) => row.tests.length === 0).map((row) => row.module)).toEqual([]);
    const missing = rows.flatMap((row) => row.tests.filter((test) => !existsSync(join(REPO_ROOT, test))).map((test) => `${row.module}: ${test}`));
    expect(missing).toEqual([]);
  });
});
