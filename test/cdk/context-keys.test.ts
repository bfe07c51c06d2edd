/**
 * The `chatctx:*` context keys are documented in one table (docs/aws.md), set (with their
 * defaults) in cdk.json and read by lib/chatctx-app.ts. A key added, renamed or
 * re-defaulted in one place and not the others would be a setting nobody can find
 * or one that silently does nothing; this test fails on either.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/bundling.ts';
import { CONTEXT_KEYS, readAppSettings } from '../../lib/chatctx-app.ts';
import { settingDefault } from '../../lambdas/config/settings.ts';
import { cdkJsonContext } from './synth-app.ts';

/** The context-key table in docs/aws.md: key → default cell. */
function readmeTable(): Map<string, string> {
  const readme = readFileSync(join(PROJECT_ROOT, 'docs', 'aws.md'), 'utf8');
  const header = readme.indexOf('| context key | default | what it does |');
  expect(header, 'docs/aws.md has the context-key table').toBeGreaterThan(-1);
  const rows = new Map<string, string>();
  for (const line of readme.slice(header).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [key, defaultCell] = line.split('|').slice(1, 3).map((cell) => cell.trim());
    rows.set(key!.replace(/`/g, ''), defaultCell!);
  }
  return rows;
}

/** How docs/aws.md writes a cdk.json value: an empty string is "none", anything else in backticks. */
const asReadmeDefault = (value: unknown) => (value === '' ? 'none' : `\`${String(value)}\``);

describe('context keys', () => {
  const readKeys = Object.values(CONTEXT_KEYS).sort();
  const documented = readmeTable();
  const inCdkJson = Object.entries(cdkJsonContext()).filter(([key]) => key.startsWith('chatctx:'));

  it('docs/aws.md documents exactly the keys the app reads', () => {
    expect([...documented.keys()].sort()).toEqual(readKeys);
  });

  it('cdk.json sets no key the app does not read', () => {
    expect(inCdkJson.map(([key]) => key).filter((key) => !readKeys.includes(key as never))).toEqual([]);
  });

  it('docs/aws.md gives each key cdk.json sets the value cdk.json sets', () => {
    for (const [key, value] of inCdkJson) expect(documented.get(key), key).toBe(asReadmeDefault(value));
  });

  it('docs/aws.md gives each key cdk.json leaves out the value the app falls back to', () => {
    const fallback = readAppSettings(new App().node);
    const absent = readKeys.filter((key) => !inCdkJson.some(([set]) => set === key));
    expect(absent.sort()).toEqual([CONTEXT_KEYS.guestDailyLimit, CONTEXT_KEYS.stackName].sort());
    expect(documented.get(CONTEXT_KEYS.stackName)).toBe(asReadmeDefault(fallback.stackName));
    expect(documented.get(CONTEXT_KEYS.guestDailyLimit)).toBe(asReadmeDefault(settingDefault('guestDailyLimit')));
  });
});
