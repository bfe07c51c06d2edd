// Runs before `npm start` and `npm test`: installs the locked dependencies when
// node_modules is missing or older than package-lock.json, so a fresh clone needs
// no separate install step. Uses only Node built-ins (it runs before any install).
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';

const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

const lock = mtime('package-lock.json');
const installed = mtime('node_modules/.package-lock.json');
if (installed === undefined || (lock !== undefined && installed < lock)) {
  console.error('Installing dependencies (npm ci)…');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
