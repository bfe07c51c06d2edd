// Runs the MCP Inspector CLI (@modelcontextprotocol/inspector-cli) against a chatctx
// endpoint: `npm run inspect -- [URL] --method tools/list [--header "Authorization: Bearer KEY"]`.
// The inspector resolves its own package.json relative to the working directory, so
// it is started from inside its package folder; arguments pass through unchanged.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json'));
const args = process.argv.slice(2);
const url = args[0] && !args[0].startsWith('-') ? args.shift() : 'http://127.0.0.1:8787/mcp';
const result = spawnSync(process.execPath, [join(packageDir, 'build', 'cli.js'), '--cli', url, '--transport', 'http', ...args], {
  cwd: join(packageDir, 'build'),
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
