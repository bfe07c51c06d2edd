// Runs the MCP Inspector CLI (@modelcontextprotocol/inspector-cli) against a chatctx
// endpoint: `npm run inspect -- [URL] --method tools/list`. An API key comes from
// CHATCTX_API_KEY (read through the settings module) and is passed to the inspector
// by this process, so it never appears in npm's echo of the command line.
// The inspector resolves its own package.json relative to the working directory, so
// it is started from inside its package folder; other arguments pass through.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { register } from 'tsx/esm/api';

register();
const { readSetting } = await import('../../lambdas/config/settings.ts');
const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json'));
const args = process.argv.slice(2);
const url = args[0] && !args[0].startsWith('-') ? args.shift() : 'http://127.0.0.1:8787/mcp';
const key = readSetting(process.env, 'apiKey');
const auth = key ? ['--header', `Authorization: Bearer ${key}`] : [];
const result = spawnSync(process.execPath, [join(packageDir, 'build', 'cli.js'), '--cli', url, '--transport', 'http', ...auth, ...args], {
  cwd: join(packageDir, 'build'),
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
