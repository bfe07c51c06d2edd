/**
 * Speed tables that cannot drift from the runs behind them: a table in the docs that
 * a benchmark writes (`--docs`) is checked here against the JSON report the same run
 * committed beside it. A figure edited by hand, or a report replaced without its
 * table, fails; so does a table whose report is missing.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/source-files.ts';
import { renderLoadSection, section } from '../../bin/bench/load-report.mjs';
import { renderColdStartSection } from '../../bin/bench/cold-start-report.mjs';

const TABLES = [
  { name: 'bench-load', doc: 'docs/testing.md', report: 'docs/bench/load.json', render: renderLoadSection },
  { name: 'bench-cold-start', doc: 'docs/testing.md', report: 'docs/bench/cold-start.json', render: renderColdStartSection },
];

describe('speed tables in the docs are rendered from the reports their runs wrote', () => {
  for (const table of TABLES) {
    it(`${table.doc}'s ${table.name} section is ${table.report} rendered`, () => {
      const doc = readFileSync(join(REPO_ROOT, table.doc), 'utf8');
      const shown = section(doc, table.name);
      expect(shown, `${table.doc} needs <!-- ${table.name}:begin --> and <!-- ${table.name}:end -->`).toBeDefined();
      expect(existsSync(join(REPO_ROOT, table.report)), `${table.report} (written by the benchmark's --docs run)`).toBe(true);
      const report = JSON.parse(readFileSync(join(REPO_ROOT, table.report), 'utf8')) as { quick: boolean; date: string };
      expect(report.quick, 'a quick run measures nothing').toBe(false);
      expect(shown).toBe(table.render(report));
      expect(shown).toContain(report.date.slice(0, 10));
    });
  }
});
