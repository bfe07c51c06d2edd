/**
 * Runs once per `vitest run`, before any worker: prepares what `memoryStore()` and
 * `preparedDataDir()` copy (see `prepared.ts`) in a temporary folder removed at the
 * end. The two builds run side by side: one is in process, the other a child.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildStore, dataDirTemplatePath, storeDumpPath } from './prepared.ts';
import { firstStartedDataDir } from './local-server.ts';

async function writeStoreDump(prepared: string, starterCorpus: boolean): Promise<void> {
  const sql = await buildStore(starterCorpus);
  try {
    const dump = await sql.db.dumpDataDir('none');
    await writeFile(storeDumpPath(prepared, starterCorpus), Buffer.from(await dump.arrayBuffer()), { mode: 0o600 });
  } finally {
    await sql.close();
  }
}

async function writeStoreDumps(prepared: string): Promise<void> {
  await writeStoreDump(prepared, false);
  await writeStoreDump(prepared, true);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const prepared = await mkdtemp(join(tmpdir(), 'chatctx-prepared-'));
  try {
    await Promise.all([writeStoreDumps(prepared), firstStartedDataDir(dataDirTemplatePath(prepared))]);
  } catch (error) {
    await rm(prepared, { recursive: true, force: true });
    throw error;
  }
  project.provide('chatctxPrepared', prepared);
  return () => rm(prepared, { recursive: true, force: true });
}
