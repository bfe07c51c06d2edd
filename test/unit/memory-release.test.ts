import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { canReleaseMemory, releaseFreedMemory, releaseFreedMemoryInBackground } from '../../lambdas/local/memory-release.ts';
import { REPO_ROOT } from '../support/local-server.ts';

// In a child process of its own: the test needs `gc()` and a heap no other test shares.
// About 200 MiB in 4 KiB buffers, every 64th kept, the rest freed and collected: the
// freed blocks lie between kept ones, where glibc does not give them back by itself.
const CHILD = `
import { releaseFreedMemoryInBackground } from './lambdas/local/memory-release.ts';
const rss = () => process.memoryUsage.rss() / 1048576;
const kept = [];
let blocks = [];
for (let i = 0; i < 51200; i++) {
  const block = Buffer.alloc(4096, 1);
  if (i % 64 === 0) kept.push(block); else blocks.push(block);
}
const full = rss();
blocks = [];
for (let round = 0; round < 3; round++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 200)); }
const collected = rss();
// As the server trims: on the thread pool.
const gaveBack = await releaseFreedMemoryInBackground();
const trimmed = rss();
console.log(JSON.stringify({ full, collected, trimmed, gaveBack, kept: kept.length }));
`;

const glibc = process.platform === 'linux' && Boolean((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);

describe('memory release (malloc_trim)', () => {
  it.runIf(glibc)('gives back memory that was freed between blocks still in use, which the allocator otherwise keeps', () => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '--eval', CHILD], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const m = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { full: number; collected: number; trimmed: number; gaveBack: boolean };
    expect(m.gaveBack).toBe(true);
    // Collected but not given back: most of the ~200 MiB is still resident...
    expect(m.full - m.collected).toBeLessThan(100);
    // ...until the trim, which returns at least 150 MiB of it.
    expect(m.collected - m.trimmed).toBeGreaterThan(150);
  });

  it('trims on Linux with glibc, and elsewhere says there is nothing to call instead of failing', async () => {
    expect(canReleaseMemory()).toBe(glibc);
    // Where there is nothing to call, neither way of trimming throws; each says it gave nothing back.
    if (!glibc) {
      expect(releaseFreedMemory()).toBe(false);
      expect(await releaseFreedMemoryInBackground()).toBe(false);
    }
  });
});
