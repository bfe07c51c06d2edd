/**
 * Which relevance profile answers a search, and where profiles live: reviewed
 * defaults in guidance/policy/relevance-profiles.json (fitted on the starter corpus;
 * `titan-v2` is the keyword profile, uncalibrated, until a platform team calibrates
 * it on its stack), and the profiles a calibration wrote into the store
 * (`relevance_profiles`), which take precedence when they were fitted on the encoder
 * the service runs. A search with a query vector uses its encoder's profile; one
 * without (no provider, or the encoder failed) uses `none`.
 */
import { z } from 'zod';
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import { PROFILE_NAMES, relevanceProfileSchema, type ProfileName, type RelevanceProfile } from './relevance.ts';
import profilesFile from '../../guidance/policy/relevance-profiles.json' with { type: 'json' };

export type RelevanceProfiles = Readonly<Record<ProfileName, RelevanceProfile>>;

const profilesFileSchema = z.strictObject({
  description: z.string(),
  profiles: z.strictObject(Object.fromEntries(PROFILE_NAMES.map((name) => [name, relevanceProfileSchema])) as Record<ProfileName, typeof relevanceProfileSchema>),
});

/** The reviewed defaults, validated once: a broken file fails loudly. */
export const DEFAULT_PROFILES: RelevanceProfiles = profilesFileSchema.parse(profilesFile).profiles;

/** The profile name of an encoder: what its cosine was (or must be) calibrated as. */
export function profileNameOf(embedder: Pick<Embedder, 'provider' | 'model'> | undefined): ProfileName {
  if (!embedder) return 'none';
  if (embedder.provider === 'use-lite') return 'use-lite';
  if (/titan-embed-text-v2/.test(embedder.model)) return 'titan-v2';
  return 'none';
}

export interface StoredProfile {
  profile: ProfileName;
  policy: RelevanceProfile;
  fitted_at: string;
}

/** The profiles a calibration stored; a row that no longer validates is skipped, never trusted. */
export async function storedProfiles(sql: Sql): Promise<StoredProfile[]> {
  const rows = await sql.query<{ profile: string; policy: unknown; fitted_at: string }>(
    'SELECT profile, policy, fitted_at FROM relevance_profiles ORDER BY profile',
    [],
    { json: ['policy'] },
  );
  return rows.flatMap((row) => {
    const parsed = relevanceProfileSchema.safeParse(row.policy);
    return parsed.success && parsed.data.profile === row.profile ? [{ profile: parsed.data.profile, policy: parsed.data, fitted_at: row.fitted_at }] : [];
  });
}

/** The defaults with the store's calibrated profiles over them. */
export async function loadProfiles(sql: Sql): Promise<RelevanceProfiles> {
  const merged: Record<ProfileName, RelevanceProfile> = { ...DEFAULT_PROFILES };
  for (const row of await storedProfiles(sql)) merged[row.profile] = row.policy;
  return merged;
}

/**
 * The profile for one search: the encoder's when a query vector was used and the
 * profile was fitted on that encoder (model and dimensions), else `none`'s, which
 * never reads the cosine.
 */
export function profileFor(profiles: RelevanceProfiles, embedder: Pick<Embedder, 'provider' | 'model' | 'dimensions'> | undefined, vectorUsed: boolean): RelevanceProfile {
  if (!vectorUsed || !embedder) return profiles.none;
  const profile = profiles[profileNameOf(embedder)];
  const fittedOn = profile.embedder;
  if (fittedOn && (fittedOn.model !== embedder.model || fittedOn.dimensions !== embedder.dimensions)) return profiles.none;
  return profile;
}

/** Stores a calibrated profile (it replaces the store's earlier one for that name). */
export async function saveProfile(sql: Sql, profile: RelevanceProfile): Promise<StoredProfile[]> {
  const parsed = relevanceProfileSchema.parse(profile);
  await sql.query(
    `INSERT INTO relevance_profiles (profile, policy) VALUES ($1, $2::jsonb)
     ON CONFLICT (profile) DO UPDATE SET policy = excluded.policy, fitted_at = now()`,
    [parsed.profile, JSON.stringify(parsed)],
  );
  return storedProfiles(sql);
}

/** Drops a stored profile, so the default applies again. */
export async function removeProfile(sql: Sql, profile: ProfileName): Promise<StoredProfile[]> {
  await sql.query('DELETE FROM relevance_profiles WHERE profile = $1', [profile]);
  return storedProfiles(sql);
}

/** Which profile an encoder's searches use here, and whether this store calibrated it (for logs and `relevance list`). */
export async function activeProfile(
  sql: Sql,
  embedder: Pick<Embedder, 'provider' | 'model' | 'dimensions'> | undefined,
): Promise<{ profile: ProfileName; source: 'store' | 'default'; calibrated: boolean; fitted_at?: string }> {
  const stored = await storedProfiles(sql);
  const profiles: Record<ProfileName, RelevanceProfile> = { ...DEFAULT_PROFILES };
  for (const row of stored) profiles[row.profile] = row.policy;
  const profile = profileFor(profiles, embedder, embedder !== undefined);
  const row = stored.find((s) => s.policy === profile);
  return { profile: profile.profile, source: row ? 'store' : 'default', calibrated: profile.calibrated, fitted_at: row?.fitted_at };
}
