/**
 * `chatctx records import` reads only regular files: a FIFO named like a record
 * file, or a device that never ends, is refused at once instead of hanging the
 * command or filling its memory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDataDir, runCli } from '../support/local-server.ts';

let dir: string;

beforeEach(async () => {
  dir = await makeDataDir();
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('CLI import paths', () => {
  it('refuses a FIFO named like a record file instead of waiting on it forever', async () => {
    const fifo = join(dir, 'records.json');
    execFileSync('mkfifo', [fifo]);
    const direct = await runCli(['--data-dir', join(dir, 'data'), 'records', 'import', fifo], { CHATCTX_EMBEDDINGS: 'none' });
    expect(direct.code).toBe(1);
    expect(direct.stderr).toMatch(/is not a regular file/);
    await mkdir(join(dir, 'only-fifo'));
    execFileSync('mkfifo', [join(dir, 'only-fifo', 'x.json')]);
    const folder = await runCli(['--data-dir', join(dir, 'data'), 'records', 'import', join(dir, 'only-fifo')], { CHATCTX_EMBEDDINGS: 'none' });
    expect(folder.code).toBe(1);
    expect(folder.stderr).toMatch(/No \.json or \.jsonl files/);
  });

  it('refuses a device that never ends instead of reading it into memory', async () => {
    const result = await runCli(['--data-dir', join(dir, 'data'), 'records', 'import', '/dev/zero'], { CHATCTX_EMBEDDINGS: 'none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is not a regular file/);
  });
});
