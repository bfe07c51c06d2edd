// Runs before `npm start` and `npm test`: installs the locked dependencies when a
// node_modules folder is missing or older than its package-lock.json, so a fresh
// clone needs no separate install step. Uses only Node built-ins (it runs before
// any install). `--conformance` also prepares test/conformance, the separately
// installed MCP conformance suite and the Node 22 it needs.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';

const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

function ensure(dir, label) {
  const lock = mtime(join(dir, 'package-lock.json'));
  const installed = mtime(join(dir, 'node_modules', '.package-lock.json'));
  if (installed !== undefined && (lock === undefined || installed >= lock)) return;
  console.error(`Installing ${label} (npm ci)…`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit', cwd: dir });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

ensure('.', 'dependencies');
if (process.argv.includes('--conformance')) ensure(join('test', 'conformance'), 'the MCP conformance suite');

// Compile the CLI ahead (see build.mjs), so the first command does not pay for it.
const { build, currentBuild } = await import('./build.mjs');
if (!currentBuild()) await build();
