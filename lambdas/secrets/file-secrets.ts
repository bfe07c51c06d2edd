/**
 * `Secrets` from a file in the data directory: 32 random bytes, created with mode
 * 0600 on first run and read once; the local counterpart of
 * `secrets-manager-secrets.ts`. Losing the file invalidates every API key and hash,
 * so it is never rotated silently.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Secrets } from '../ports/secrets.ts';
import { loadOnce } from '../errors/load-once.ts';

export class FileSecrets implements Secrets {
  /** The pepper, read once; a failed read is not remembered, so a repaired file is picked up. */
  readonly pepper: () => Promise<Buffer> = loadOnce(() => this.load());

  constructor(private readonly dataDir: string) {}

  get path(): string {
    return join(this.dataDir, 'pepper');
  }

  private async load(): Promise<Buffer> {
    try {
      const hex = (await readFile(this.path, 'utf8')).trim();
      if (!/^[0-9a-f]{64,}$/.test(hex)) throw new Error('The pepper file is corrupt; restore it from a backup.');
      return Buffer.from(hex, 'hex');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const pepper = randomBytes(32);
      // 'wx' fails if another process created it first; then read theirs.
      try {
        await writeFile(this.path, pepper.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
      } catch (raced) {
        if ((raced as NodeJS.ErrnoException).code === 'EEXIST') return this.load();
        throw raced;
      }
      await chmod(this.path, 0o600);
      return pepper;
    }
  }
}
