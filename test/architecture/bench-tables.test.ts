/**
 * Speed tables that cannot drift from the runs behind them: a table in the docs that
 * a benchmark writes (`--docs`) is checked here against the JSON report the same run
 * committed beside it. A figure edited by hand, or a report replaced without its
 * table, fails; so does a table whose report is missing. Every section a benchmark's
 * `--docs` run writes (bin/bench/docs-report.mjs) must have its markers in its doc, so
 * a run cannot fail at its end for a heading someone reworded; the renderers
 * themselves run on each benchmark's quick report in test/e2e/benchmarks.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/source-files.ts';
import { renderLoadSection, section } from '../../bin/bench/load-report.mjs';
import { renderColdStartSection } from '../../bin/bench/cold-start-report.mjs';
import { RECORDED } from '../../bin/bench/docs-report.mjs';
import { readReports, renderReadmeSpeed } from '../../bin/bench/readme-speed.mjs';

/** Every section whose benchmark has recorded its report (docs-report.mjs's, beside load and cold start). */
const TABLES = [
  { name: 'bench-load', doc: 'docs/testing.md', report: 'docs/bench/load.json', render: renderLoadSection },
  { name: 'bench-cold-start', doc: 'docs/testing.md', report: 'docs/bench/cold-start.json', render: renderColdStartSection },
  ...Object.entries(RECORDED)
    .filter(([report]) => existsSync(join(REPO_ROOT, 'docs', 'bench', `${report}.json`)))
    .flatMap(([report, { doc, sections }]) => Object.entries(sections).map(([name, render]) => ({ name, doc, report: `docs/bench/${report}.json`, render }))),
];

/** The benchmarks whose tables are still the hand-written ones (not recorded since their benchmark learned --docs). */
const HAND_WRITTEN = new Set(Object.keys(RECORDED).filter((report) => !existsSync(join(REPO_ROOT, 'docs', 'bench', `${report}.json`))));

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

describe('every section a benchmark records has its markers', () => {
  for (const [report, { doc, sections }] of Object.entries(RECORDED)) {
    for (const name of Object.keys(sections)) {
      it(`${doc} has the ${name} section that docs/bench/${report}.json is rendered into`, () => {
        expect(section(readFileSync(join(REPO_ROOT, doc), 'utf8'), name)).toBeDefined();
      });
    }
  }
});

describe("the README's speed table", () => {
  it('is the committed reports rendered (bin/bench/readme-speed.mjs), a row for each figure the README promises', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const shown = section(readme, 'bench-readme');
    expect(shown, 'README.md needs <!-- bench-readme:begin --> and <!-- bench-readme:end -->').toBeDefined();
    expect(shown).toBe(renderReadmeSpeed(readReports(REPO_ROOT)));
    expect(shown).not.toContain('not recorded');
  });
});

describe('recorded tables', () => {
  it('every benchmark that writes a table has recorded it, except those listed in the docs as still hand-written', () => {
    const testing = readFileSync(join(REPO_ROOT, 'docs/testing.md'), 'utf8');
    for (const report of HAND_WRITTEN) expect(testing, `docs/testing.md names ${report} as not yet recorded`).toContain(`still hand-written: \`${report}\``);
  });
});
