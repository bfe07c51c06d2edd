/**
 * `Secrets` from a file in the data directory: 32 random bytes as hex, 0600, read
 * once; the local counterpart of `secrets-manager-secrets.ts`.
 *
 * Every API key hash and guest counter depends on this pepper, so a new one is
 * written only for a new store (`create`). For a store that already has data, a
 * missing or damaged file is an error that says how to recover; it is never
 * replaced silently, which would revoke every key at once.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import type { Secrets } from '../ports/secrets.ts';
import { loadOnce } from '../errors/load-once.ts';

export interface FileSecretsOptions {
  /** The pepper file, e.g. `<data dir>/pepper`. */
  readonly path: string;
  /** Write a new pepper if the file is missing: only for a store being created. @default false */
  readonly create?: boolean;
}

export class FileSecrets implements Secrets {
  /** The pepper, read once; a failed read is not remembered, so a repaired file is picked up. */
  readonly pepper: () => Promise<Buffer> = loadOnce(() => this.load());
  readonly path: string;
  private readonly create: boolean;

  constructor(options: FileSecretsOptions) {
    this.path = options.path;
    this.create = options.create ?? false;
  }

  private async load(): Promise<Buffer> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (!this.create) {
        throw new Error(
          `The pepper file ${this.path} is missing, but the store beside it has data: every API key and guest counter ` +
            'depends on it. Restore the file from a backup of this data directory. To start over instead, move the whole ' +
            'data directory away; a new pepper is never written over an existing store.',
        );
      }
      return this.write();
    }
    const hex = text.trim();
    if (!/^[0-9a-f]{64,}$/.test(hex)) throw new Error(`The pepper file ${this.path} is damaged; restore it from a backup of this data directory.`);
    return Buffer.from(hex, 'hex');
  }

  private async write(): Promise<Buffer> {
    const pepper = randomBytes(32);
    // 'wx' fails if the file appeared meanwhile; then read that one.
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
