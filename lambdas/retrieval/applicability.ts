/**
 * Checks a record's `applies_to` against the caller's technologies and versions.
 * Version constraints are semver ranges (`>=18`, `^4.2`, `14 - 16`); a requested
 * version outside every constraint for that technology means the record does not
 * apply, and the result says which versions it covers instead.
 */
import semver from 'semver';
import type { AppliesTo } from '../records/record-read.ts';
import { sameTechnology as same } from '../records/technology-vocabulary.ts';

export interface Applicability {
  /** Record names at least one requested technology. */
  readonly technologyMatch: boolean;
  /** A requested version satisfies a constraint of this record. */
  readonly versionMatch: boolean;
  /** Set when a requested version is outside the record's constraint. */
  readonly excludedNote?: string;
}

export function checkApplicability(
  appliesTo: readonly AppliesTo[],
  technologies: readonly string[],
  versions: Readonly<Record<string, string>>,
): Applicability {
  const technologyMatch = appliesTo.some((a) => technologies.some((t) => same(a.name, t)));
  let versionMatch = false;
  const excluded: string[] = [];
  for (const [name, requested] of Object.entries(versions)) {
    const constraints = appliesTo.filter((a) => same(a.name, name) && a.version_constraint);
    if (constraints.length === 0) continue;
    const version = semver.coerce(requested);
    if (!version) continue;
    const ok = constraints.some((a) => semver.satisfies(version, a.version_constraint!, { includePrerelease: true }));
    if (ok) versionMatch = true;
    else excluded.push(`covers ${constraints.map((a) => `${a.name} ${a.version_constraint}`).join(' or ')}, not the requested ${name} ${requested}`);
  }
  return {
    technologyMatch,
    versionMatch,
    excludedNote: excluded.length > 0 ? `Does not apply as requested: this guidance ${excluded.join('; ')}.` : undefined,
  };
}
