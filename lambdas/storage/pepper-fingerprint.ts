/**
 * The guard that keeps a deploy from silently swapping the pepper. Every stored
 * API key hash, OAuth grant and guest counter is keyed with it, so a different
 * pepper (a secret replaced or recreated, a restore that forgot to adopt the old
 * one, an upgrade that moved where it lives) would revoke all of them at once,
 * with nothing saying why. The migrate function therefore records a keyed
 * fingerprint of the pepper in the database (`schema/010_pepper_fingerprint.sql`)
 * and refuses to finish a deploy whose pepper does not match it.
 *
 * The fingerprint is an HMAC of a fixed label under the pepper: it identifies the
 * pepper without revealing anything about it.
 */
import { keyedHash } from '../privacy/hashing.ts';
import type { Sql } from '../ports/sql.ts';

const LABEL = 'chatctx pepper fingerprint v1';

/** How the deploy got its pepper: made by this stack, or an existing secret the owner named. */
export type PepperSource = 'stack' | 'adopted';

export class PepperMismatchError extends Error {
  override readonly name = 'PepperMismatchError';
}

export function pepperFingerprint(pepper: Buffer): string {
  return keyedHash(pepper, LABEL);
}

/**
 * Records the pepper's fingerprint on first use, and from then on accepts only the
 * same pepper. A database that already holds keys or grants but no fingerprint
 * (made before the guard existed) accepts only an adopted pepper: the owner named
 * the secret the keys were made with, which a freshly generated one is not.
 */
export async function checkPepper(
  sql: Sql,
  pepper: Buffer,
  source: PepperSource,
  options: { readonly replace?: boolean } = {},
): Promise<'matched' | 'recorded' | 'replaced'> {
  const fingerprint = pepperFingerprint(pepper);
  const stored = await sql.query<{ fingerprint: string }>('SELECT fingerprint FROM pepper_fingerprint');
  if (stored.length > 0) {
    if (stored[0]!.fingerprint === fingerprint) return 'matched';
    // The owner's deliberate replacement (chatctx:replacePepper): every stored key and grant stops working.
    if (options.replace) {
      await sql.query('UPDATE pepper_fingerprint SET fingerprint = $1, recorded_at = now()', [fingerprint]);
      return 'replaced';
    }
    throw new PepperMismatchError(
      "The pepper this deploy would use is not the one this database's API keys and OAuth grants were made with; " +
        'finishing would revoke every one of them. Deploy with -c chatctx:pepperSecretArn=<the complete ARN of the secret ' +
        'that holds the earlier pepper>, or, to replace the pepper on purpose and revoke them all, once with ' +
        '-c chatctx:replacePepper=true (docs/aws.md, Runbooks).',
    );
  }
  if (source === 'stack' && !options.replace && (await holdsKeyedData(sql))) {
    throw new PepperMismatchError(
      'This database holds API keys or OAuth grants made before its pepper was fingerprinted, and this deploy would use ' +
        'a pepper the stack generated, not the one they were made with. Deploy with -c chatctx:pepperSecretArn=<the ' +
        'complete ARN of the secret that holds the earlier pepper> (docs/aws.md, Runbooks).',
    );
  }
  await sql.query('INSERT INTO pepper_fingerprint (fingerprint) VALUES ($1) ON CONFLICT (singleton) DO NOTHING', [fingerprint]);
  return 'recorded';
}

async function holdsKeyedData(sql: Sql): Promise<boolean> {
  const rows = await sql.query<{ keyed: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM api_keys) OR EXISTS (SELECT 1 FROM oauth_families) AS keyed',
  );
  return rows[0]?.keyed === true;
}
