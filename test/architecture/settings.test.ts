/**
 * One configuration contract: every setting is defined in `lambdas/config/settings.ts`
 * and read only through it, no source file spells a setting's variable name again,
 * the table in docs/configuration.md is the one the module renders, and a bad value stops the start
 * with an error that names the variable.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ConfigError, SETTINGS, readSetting, renderSettingsTable, settingDefault } from '../../lambdas/config/settings.ts';
import { REPO_ROOT, sourceFiles } from '../support/source-files.ts';

const SETTINGS_MODULE = 'lambdas/config/settings.ts';
const sources = sourceFiles(['lambdas', 'lib', 'bin', 'schema']).filter((f) => f.path !== SETTINGS_MODULE);
const names = new Set(Object.values(SETTINGS).map((setting) => setting.env));

describe('settings are read in one place', () => {
  it('no source file reads a variable from the environment itself', () => {
    const reads = sources.flatMap((file) =>
      file.text
        .split('\n')
        .map((line, i) => ({ line, at: `${file.path}:${i + 1}` }))
        // Handing the whole environment to readSetting is fine; picking a variable out of it is not.
        .filter(({ line }) => /process\.env\s*(\.|\[)|\benv\s*(\.\s*[A-Z_][A-Z0-9_]*\b|\[\s*['"`])/.test(line))
        .map(({ at }) => at),
    );
    expect(reads).toEqual([]);
  });

  it('no source file spells a setting variable name outside the settings module', () => {
    const spelled: string[] = [];
    for (const file of sources) {
      const visit = (node: ts.Node) => {
        if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && names.has(node.text)) {
          spelled.push(`${file.path}:${file.ast.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.text}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(file.ast);
    }
    expect(spelled).toEqual([]);
  });

  it('the table in docs/configuration.md is the one rendered from the settings module', () => {
    const readme = readFileSync(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
    const table = /<!-- settings:begin[^>]*-->\n([\s\S]*?)\n<!-- settings:end -->/.exec(readme)?.[1];
    expect(table, 'docs/configuration.md needs the settings table between its settings:begin/end markers').toBeDefined();
    expect(table).toBe(renderSettingsTable());
  });
});

describe('reading a setting', () => {
  it('takes the default when the variable is absent or blank', () => {
    expect(readSetting({}, 'guestDailyLimit')).toBe(250);
    expect(readSetting({ [SETTINGS.guestDailyLimit.env]: '  ' }, 'guestDailyLimit')).toBe(settingDefault('guestDailyLimit'));
    expect(readSetting({}, 'allowedOrigins')).toEqual([]);
    expect(readSetting({}, 'starterCorpus')).toBe(true);
  });

  it('parses each kind of value', () => {
    expect(readSetting({ [SETTINGS.port.env]: ' 0 ' }, 'port')).toBe(0);
    expect(readSetting({ [SETTINGS.allowedOrigins.env]: 'HTTP://A.example, ,http://b.example' }, 'allowedOrigins')).toEqual(['http://a.example', 'http://b.example']);
    expect(readSetting({ [SETTINGS.starterCorpus.env]: 'false' }, 'starterCorpus')).toBe(false);
    expect(readSetting({ [SETTINGS.embeddings.env]: ' Bedrock ' }, 'embeddings')).toBe('bedrock');
    expect(readSetting({ [SETTINGS.roleSecretArns.env]: '{"chatctx_search":"arn:x"}' }, 'roleSecretArns')).toEqual({ chatctx_search: 'arn:x' });
  });

  it.each([
    ['guestDailyLimit', '-1', /CHATCTX_GUEST_DAILY_LIMIT must be a whole number from 0 to 10000000/],
    ['port', '80.5', /PORT must be a whole number from 0 to 65535/],
    ['keepAliveSeconds', '26', /CHATCTX_KEEPALIVE_SECONDS must be a whole number from 1 to 25/],
    ['starterCorpus', 'yes', /CHATCTX_STARTER_CORPUS must be 1 or 0/],
    ['embeddings', 'openai', /CHATCTX_EMBEDDINGS must be one of use-lite, bedrock, none; got "openai"/],
    ['roleSecretArns', '["arn"]', /CHATCTX_ROLE_SECRET_ARNS must be a JSON object of strings/],
  ] as const)('refuses a bad %s with a ConfigError naming the variable', (name, raw, message) => {
    const read = () => readSetting({ [SETTINGS[name].env]: raw }, name);
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(message);
  });

  it('refuses a missing required setting, naming it and what it is for', () => {
    expect(() => readSetting({}, 'dbClusterArn')).toThrow(/CHATCTX_DB_CLUSTER_ARN is required \(the Aurora cluster/);
    expect(() => settingDefault('dbClusterArn')).toThrow(/has no default/);
  });

  it('never repeats a bad value that could be a secret in its message', () => {
    const secretish = 'arn:aws:secretsmanager:us-east-1:1:secret:x';
    expect(() => readSetting({ [SETTINGS.roleSecretArns.env]: `{${secretish}` }, 'roleSecretArns')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(secretish) }),
    );
  });
});
