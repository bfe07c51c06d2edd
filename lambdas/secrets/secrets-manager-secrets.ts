/**
 * `Secrets` from AWS Secrets Manager: the hosted counterpart of `FileSecrets`.
 *
 * What it owns:
 * - Reading the pepper secret (`GetSecretValue`) and caching it for `maxAgeMs`
 *   (15 minutes by default), so a warm Lambda makes one call per cold start and
 *   then one per interval. Concurrent callers share one in-flight read. A failed
 *   read is not cached: the next call tries again.
 * - Turning the secret into pepper bytes. Two forms are accepted:
 *   - the JSON object the stack generates, `{"pepper": "<string>"}`
 *     (`SecretStringGenerator` with `generateStringKey: 'pepper'`), or
 *   - a plain SecretString that is the pepper itself.
 *   The pepper string is decoded as follows:
 *   - pure hex of even length >= 64 → the hex-decoded bytes (>= 32 bytes). This is
 *     the format of the local `pepper` file, so a pepper moved from a local install
 *     keeps every API key and hash valid;
 *   - otherwise any string of >= 32 characters → its UTF-8 bytes. The generator's
 *     64-character alphanumeric output is not guaranteed to be hex, so it lands
 *     here; it still carries well over 256 bits of entropy.
 *   The decoding depends only on the secret's value, so it is stable across reads.
 *
 * What it does not do:
 * - Create or rotate the secret (the stack creates it; rotating the pepper would
 *   invalidate every API key and stored hash, so it is never rotated).
 * - Put secret contents in an error message, or keep a JSON parse error as the
 *   cause (those quote the input).
 * - Serve a stale pepper when a refresh fails: the failure reaches the caller.
 */
import { randomInt } from 'node:crypto';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { RoleCredentials, Secrets } from '../ports/secrets.ts';

export const DEFAULT_PEPPER_MAX_AGE_MS = 15 * 60 * 1000;
/** Shortest accepted pepper string (characters, when not hex-decoded). */
export const MIN_PEPPER_CHARS = 32;
/** Shortest hex string that is hex-decoded rather than used as UTF-8. */
const MIN_HEX_CHARS = 64;
const HEX_PATTERN = /^[0-9a-fA-F]+$/;

export interface SecretsManagerSecretsOptions {
  client?: SecretsManagerClient;
  /** Name or ARN of the pepper secret. */
  secretId: string;
  /** How long a read pepper is reused, in milliseconds. */
  maxAgeMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

interface CacheEntry {
  readonly value: Promise<Buffer>;
  /** Infinity while the read is in flight, so concurrent callers share it. */
  expiresAt: number;
}

export class SecretsManagerSecrets implements Secrets {
  private readonly client: SecretsManagerClient;
  private readonly secretId: string;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private cache: CacheEntry | undefined;

  constructor(options: SecretsManagerSecretsOptions) {
    this.client = options.client ?? new SecretsManagerClient({});
    this.secretId = options.secretId;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_PEPPER_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
  }

  pepper(): Promise<Buffer> {
    const cached = this.cache;
    if (cached && this.now() < cached.expiresAt) return cached.value;
    const entry: CacheEntry = { value: this.read(), expiresAt: Number.POSITIVE_INFINITY };
    this.cache = entry;
    entry.value.then(
      () => {
        entry.expiresAt = this.now() + this.maxAgeMs;
      },
      () => {
        if (this.cache === entry) this.cache = undefined;
      },
    );
    return entry.value;
  }

  private async read(): Promise<Buffer> {
    const output = await this.client.send(new GetSecretValueCommand({ SecretId: this.secretId }));
    return parsePepperSecret(output.SecretString);
  }
}

/**
 * Reads the `{"username", "password"}` secret of each database role (keyed by role
 * name). A secret with a username and no password yet gets one: the tool role's
 * secret is generated holding the pepper (`lib/database.ts`), and its password is
 * written here, by the migrate function, which sets it on the role right after.
 * Every other field (the pepper, the cluster's address) is kept as it was. Errors
 * name the role, never the secret's contents.
 */
export async function readRoleCredentials(
  client: SecretsManagerClient,
  secretArns: Readonly<Record<string, string>>,
  options: { readonly fillMissingPasswords?: boolean } = {},
): Promise<Record<string, RoleCredentials>> {
  const out: Record<string, RoleCredentials> = {};
  for (const [role, arn] of Object.entries(secretArns)) {
    const value = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(value.SecretString ?? '{}') as Record<string, unknown>;
    } catch {
      // Reported below without the text.
    }
    const username = parsed.username;
    if (typeof username !== 'string' || !username) throw new Error(`The secret for ${role} has no username.`);
    if (typeof parsed.password !== 'string' || !parsed.password) {
      if (!options.fillMissingPasswords) throw new Error(`The secret for ${role} has no username or password.`);
      parsed = { ...parsed, password: newPassword() };
      await client.send(new PutSecretValueCommand({ SecretId: arn, SecretString: JSON.stringify(parsed) }));
    }
    out[role] = { username, password: parsed.password as string };
  }
  return out;
}

/** 40 letters and digits: nothing to escape in `ALTER ROLE … PASSWORD '…'`, about 238 bits. */
function newPassword(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: 40 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

/** Pepper bytes from a SecretString (JSON `{"pepper": …}` or the plain pepper). */
export function parsePepperSecret(secretString: string | undefined): Buffer {
  if (secretString === undefined || secretString.trim() === '') {
    throw new Error('The pepper secret is missing: it has no SecretString value.');
  }
  const text = secretString.trim();
  let pepper: unknown = text;
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // No cause: JSON.parse messages quote the secret.
      throw new Error('The pepper secret looks like JSON but does not parse.');
    }
    pepper = (parsed as { pepper?: unknown } | null)?.pepper;
    if (typeof pepper !== 'string') {
      throw new Error('The pepper secret is a JSON object without a string "pepper" field.');
    }
    pepper = pepper.trim();
  }
  const value = pepper as string;
  if (value.length >= MIN_HEX_CHARS && value.length % 2 === 0 && HEX_PATTERN.test(value)) {
    return Buffer.from(value, 'hex');
  }
  if (value.length < MIN_PEPPER_CHARS) {
    throw new Error(`The pepper secret is too short: it needs at least ${MIN_PEPPER_CHARS} characters.`);
  }
  return Buffer.from(value, 'utf8');
}
