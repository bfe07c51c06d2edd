/**
 * The quality gates (the contract's seven, and `asked_as`), as pure functions of a candidate record,
 * the review rules, the source policy and the approved records most like it (found
 * by `similar-records.ts`). Each gate has a stable code, a verdict and a message
 * an owner can act on. A `fail` blocks approval unless the owner overrides that
 * gate with a written reason; a `warn` is shown and stored with the approval.
 *
 * Nothing here touches the store, so the CLI's `records gates FILE`, an import
 * with `--approve` and `records approve` judge a record identically.
 */
import semver from 'semver';
import { readSettings, type Environment } from '../config/settings.ts';
import { ASKED_AS_MAX, ASKED_AS_MAX_CHARS, ASKED_AS_MIN, ASKED_AS_MIN_CHARS, type RecordFile } from './record-schema.ts';
import { phraseKey, type PhrasingClash } from './phrasings.ts';
import { judgeSource, type SourcePolicy } from './source-policy.ts';
import { checkKey, type StoredCheck } from './source-verification.ts';
import { canonicalTechnology, isKnownTechnology, sameTechnology } from './technology-vocabulary.ts';

export const GATE_CODES = ['evidence', 'source_authority', 'freshness', 'license', 'version_scope', 'duplicates', 'conflicts', 'asked_as'] as const;
export type GateCode = (typeof GATE_CODES)[number];
export type Verdict = 'pass' | 'warn' | 'fail';

export interface GateResult {
  readonly code: GateCode;
  readonly verdict: Verdict;
  /** What is wrong and what to do, or what was checked when it passed. */
  readonly message: string;
}

export interface GateReport {
  readonly slug: string;
  /** The worst verdict of the seven. */
  readonly verdict: Verdict;
  readonly gates: readonly GateResult[];
}

export interface ReviewRules {
  /** Older reviews warn… */
  readonly freshnessWarnMonths: number;
  /** …and much older ones fail. */
  readonly freshnessFailMonths: number;
  /** The longest evidence excerpt, in words: a short quote, so the corpus can be published. */
  readonly excerptMaxWords: number;
  /** The licence a record without one gets; null when records must state their own. */
  readonly defaultLicense: string | null;
  /** A check this recent that found an excerpt missing fails the evidence gate. */
  readonly evidenceCheckDays: number;
}

/** The shortest evidence excerpt that lets a reviewer check the claim against its source. */
export const EXCERPT_MIN_WORDS = 8;
/** Text similarity (see `similar-records.ts`) from which a candidate reads as a copy of an approved record. */
export const DUPLICATE_SIMILARITY = 0.75;
/** Similarity from which two records about the same technologies and topic are about the same decision. */
export const CONFLICT_SIMILARITY = 0.3;
/** `applies_to` kinds whose guidance usually depends on the version. */
export const VERSIONED_KINDS: ReadonlySet<string> = new Set(['framework', 'library', 'runtime', 'database']);

export function readReviewRules(env: Environment): ReviewRules {
  const s = readSettings(env, ['freshnessWarnMonths', 'freshnessFailMonths', 'excerptMaxWords', 'defaultLicense', 'evidenceCheckDays']);
  return {
    freshnessWarnMonths: s.freshnessWarnMonths,
    freshnessFailMonths: Math.max(s.freshnessFailMonths, s.freshnessWarnMonths),
    excerptMaxWords: s.excerptMaxWords,
    defaultLicense: s.defaultLicense === '' || s.defaultLicense.toLowerCase() === 'none' ? null : s.defaultLicense,
    evidenceCheckDays: s.evidenceCheckDays,
  };
}

/** An approved record close to the candidate, with the fields the gates compare. */
export interface Neighbour {
  readonly id: string;
  readonly slug: string;
  readonly title: string;
  readonly topic: string;
  readonly technologies: readonly string[];
  readonly recommendation: string;
  /** 0..1, see `similar-records.ts`. */
  readonly similarity: number;
}

export interface GateInput {
  readonly record: RecordFile;
  readonly rules: ReviewRules;
  readonly policy: SourcePolicy;
  readonly neighbours: readonly Neighbour[];
  /** Its phrasings (title, `asked_as`) that other records already use. @default none */
  readonly clashes?: readonly PhrasingClash[];
  /** The newest check of each source's excerpt against its page, by `checkKey`. @default none: every excerpt unverified */
  readonly checks?: ReadonlyMap<string, StoredCheck>;
  readonly now: Date;
}

type Problem = { verdict: Verdict; text: string };
const words = (text: string | undefined) => (text ?? '').split(/\s+/).filter(Boolean).length;
const result = (code: GateCode, problems: Problem[], passed: string): GateResult => {
  const verdict = problems.some((p) => p.verdict === 'fail') ? 'fail' : problems.length > 0 ? 'warn' : 'pass';
  return { code, verdict, message: problems.length > 0 ? problems.map((p) => p.text).join(' ') : passed };
};
const sourceName = (index: number, title: string) => `Source ${index + 1} ("${title}")`;

function evidenceGate({ record, rules, checks, now }: GateInput): GateResult {
  const problems = record.sources.flatMap((s, i): Problem[] => {
    const n = words(s.evidence_excerpt);
    if (n === 0) return [{ verdict: 'fail' as const, text: `${sourceName(i, s.title)} has no evidence_excerpt: quote the passage that backs the recommendation.` }];
    if (n < EXCERPT_MIN_WORDS) {
      return [{ verdict: 'fail' as const, text: `${sourceName(i, s.title)} quotes ${n} word(s); an excerpt needs at least ${EXCERPT_MIN_WORDS} to be checkable.` }];
    }
    return checkProblems(sourceName(i, s.title), newest(checks?.get(checkKey(s.url, s.evidence_excerpt!)), declaredCheck(s)), rules.evidenceCheckDays, now);
  });
  if (!record.sources.some((s) => s.relation === 'supports')) {
    problems.push({ verdict: 'fail', text: 'No source has relation "supports": cite at least one source that supports the recommendation.' });
  }
  return result('evidence', problems, `Every source quotes its evidence and ${record.sources.filter((s) => s.relation === 'supports').length} support(s) the recommendation.`);
}

/** The file's own claim (`verified_at`, `verified_from`) as a check: the owner found the excerpt on that day. */
function declaredCheck(source: RecordFile['sources'][number]): StoredCheck | undefined {
  if (!source.verified_at) return undefined;
  return { status: 'verified', how: 'declared', detail: null, closest: null, similarity: null, checkedAt: `${source.verified_at}T00:00:00Z` };
}

/** The later of a stored check and the file's claim: a newer fetch overrules an older claim, and the reverse. */
function newest(stored: StoredCheck | undefined, declared: StoredCheck | undefined): StoredCheck | undefined {
  if (!stored || !declared) return stored ?? declared;
  return Date.parse(stored.checkedAt) >= Date.parse(declared.checkedAt) ? stored : declared;
}

/**
 * What the newest check of an excerpt says: never checked warns (`unverified`, so
 * approving offline still works); missing from the page at a check within
 * `days` fails; a page that could not be read, or an older miss, warns.
 */
function checkProblems(name: string, check: StoredCheck | undefined, days: number, now: Date): Problem[] {
  if (!check) return [{ verdict: 'warn', text: `${name} is unverified: its excerpt was never checked against the page (\`chatctx records verify\`).` }];
  if (check.status === 'verified') return [];
  const when = check.checkedAt.slice(0, 10);
  const recent = now.getTime() - Date.parse(check.checkedAt) <= days * 86_400_000;
  if (check.status === 'drifted') {
    const closest = check.closest ? ` The closest passage (${Math.round((check.similarity ?? 0) * 100)}% alike) reads: "${check.closest}".` : '';
    if (recent) return [{ verdict: 'fail', text: `${name}: its excerpt was not on the page when checked on ${when}.${closest} Quote the page as it reads now.` }];
    return [{ verdict: 'warn', text: `${name}: its excerpt was not on the page at the last check (${when}, over ${days} days ago); check again with \`chatctx records verify\`.` }];
  }
  return [{ verdict: 'warn', text: `${name} could not be checked on ${when} (${check.status}${check.detail ? `: ${check.detail}` : ''}).` }];
}

function authorityGate({ record, policy }: GateInput): GateResult {
  const problems = record.sources.flatMap((s, i): Problem[] => {
    const judged = judgeSource(policy, s.url);
    const host = new URL(s.url).hostname;
    if (judged.standing === 'blocked') return [{ verdict: 'fail' as const, text: `${sourceName(i, s.title)} is on ${host}, which the source policy blocks (${judged.reason}).` }];
    if (judged.standing === 'unknown') {
      return [{
        verdict: 'warn' as const,
        text: `${sourceName(i, s.title)} is on ${host}, which the source policy does not know: cite official documentation or a standard, or trust the host with \`chatctx policy trust ${host}\`.`,
      }];
    }
    return [];
  });
  const supporting = record.sources.filter((s) => s.relation === 'supports');
  if (supporting.length > 0 && !supporting.some((s) => judgeSource(policy, s.url).standing === 'authoritative')) {
    problems.push({
      verdict: 'fail',
      text: 'No supporting source is on a host the source policy treats as authoritative: cite official documentation or a standard for the recommendation, or override with a reason.',
    });
  }
  return result('source_authority', problems, `Every source is on a host the policy (version ${policy.version}) treats as authoritative.`);
}

function monthsBetween(earlier: Date, later: Date): number {
  return (later.getTime() - earlier.getTime()) / (30.4375 * 24 * 3600 * 1000);
}

function freshnessGate({ record, rules, now }: GateInput): GateResult {
  if (!record.reviewed_at) {
    return result('freshness', [{ verdict: 'fail', text: 'The record has no reviewed_at: check it against its sources, then set reviewed_at to that day (YYYY-MM-DD).' }], '');
  }
  const reviewed = new Date(`${record.reviewed_at}T00:00:00Z`);
  const months = monthsBetween(reviewed, now);
  const due = `re-check the guidance against its sources and set reviewed_at to the day you did`;
  if (months < -1 / 30) return result('freshness', [{ verdict: 'fail', text: `reviewed_at ${record.reviewed_at} is in the future.` }], '');
  if (months > rules.freshnessFailMonths) {
    return result('freshness', [{ verdict: 'fail', text: `Last reviewed ${record.reviewed_at}, ${Math.floor(months)} months ago (the limit is ${rules.freshnessFailMonths}): ${due}.` }], '');
  }
  if (months > rules.freshnessWarnMonths) {
    return result('freshness', [{ verdict: 'warn', text: `Last reviewed ${record.reviewed_at}, ${Math.floor(months)} months ago (due after ${rules.freshnessWarnMonths}): ${due}.` }], '');
  }
  return result('freshness', [], `Reviewed ${record.reviewed_at}, within ${rules.freshnessWarnMonths} months.`);
}

function licenseGate({ record, rules, policy }: GateInput): GateResult {
  const problems: Problem[] = [];
  if (!record.license) {
    problems.push(
      rules.defaultLicense
        ? { verdict: 'warn', text: `The record states no license; the store's default ${rules.defaultLicense} will apply. State it with "license".` }
        : { verdict: 'fail', text: 'The record states no license and the store has no default: add "license" (e.g. CC-BY-4.0).' },
    );
  } else if (!policy.licenses.includes(record.license)) {
    problems.push({ verdict: 'fail', text: `License ${record.license} is not one the corpus is published under (${policy.licenses.join(', ')}).` });
  }
  record.sources.forEach((s, i) => {
    const n = words(s.evidence_excerpt);
    if (n > rules.excerptMaxWords) {
      problems.push({ verdict: 'fail', text: `${sourceName(i, s.title)} quotes ${n} words; keep evidence to a short quote of at most ${rules.excerptMaxWords} words.` });
    }
  });
  return result('license', problems, `Licensed ${record.license ?? rules.defaultLicense}; every excerpt is a short quote (at most ${rules.excerptMaxWords} words).`);
}

function versionScopeGate({ record, policy }: GateInput): GateResult {
  const added = policy.technologies;
  const problems = record.applies_to.flatMap((a): Problem[] => {
    const out: Problem[] = [];
    if (a.version_constraint !== undefined && semver.validRange(a.version_constraint) === null) {
      out.push({ verdict: 'fail', text: `${a.name}: "${a.version_constraint}" is not a semver range (write e.g. ">=18", "^16.8.0" or ">=9.6 <17").` });
    }
    if (!isKnownTechnology(a.name) && !added.some((t) => sameTechnology(t, a.name))) {
      out.push({ verdict: 'fail', text: `${a.name} is not in the technology vocabulary: use a known name or alias, or add it with \`chatctx policy add-technology "${a.name}"\`.` });
    }
    if (VERSIONED_KINDS.has(a.kind) && a.version_constraint === undefined) {
      out.push({ verdict: 'warn', text: `${a.name} (${a.kind}) has no version_constraint: say from which version the guidance holds.` });
    }
    return out;
  });
  return result('version_scope', problems, 'Every technology is known and every version constraint is a valid semver range.');
}

function duplicatesGate({ record, neighbours, clashes = [] }: GateInput): GateResult {
  const problems: Problem[] = neighbours
    .filter((n) => n.similarity >= DUPLICATE_SIMILARITY && !record.supersedes.includes(n.slug))
    .map((n) => ({
      verdict: 'fail' as const,
      text:
        `Reads as a duplicate of approved record "${n.slug}" (similarity ${n.similarity.toFixed(2)}, limit ${DUPLICATE_SIMILARITY}): ` +
        `revise that record under its own slug, or declare "supersedes": ["${n.slug}"] to replace it.`,
    }));
  for (const clash of clashes) {
    problems.push({
      verdict: 'fail',
      text:
        `"${clash.phrase}" is already the ${clash.field === 'title' ? 'title' : 'asked_as phrasing'} of record "${clash.slug}": ` +
        'a question asked in those words would find both; reword it to what only this record answers.',
    });
  }
  return result(
    'duplicates',
    problems,
    `No approved record is as similar as ${DUPLICATE_SIMILARITY}, and no other record uses its title or asked_as phrasings${record.supersedes.length ? ' (superseded records aside)' : ''}.`,
  );
}

/**
 * How agents ask for the record: ASKED_AS_MIN–ASKED_AS_MAX phrasings of
 * ASKED_AS_MIN_CHARS–ASKED_AS_MAX_CHARS characters, none repeated. A record without
 * any is publishable (it is found by its own wording only), so that is a warning.
 */
function askedAsGate({ record }: GateInput): GateResult {
  const asked = record.asked_as;
  if (asked === undefined || asked.length === 0) {
    return result('asked_as', [{
      verdict: 'warn',
      text: `No asked_as: add ${ASKED_AS_MIN}–${ASKED_AS_MAX} phrasings agents use for this (symptoms with exact error texts, decisions, acronyms), or questions in other words will miss it.`,
    }], '');
  }
  const problems: Problem[] = [];
  if (asked.length < ASKED_AS_MIN || asked.length > ASKED_AS_MAX) {
    problems.push({ verdict: 'fail', text: `asked_as has ${asked.length} phrasing(s); give ${ASKED_AS_MIN} to ${ASKED_AS_MAX}.` });
  }
  asked.forEach((phrase, i) => {
    if (phrase.length < ASKED_AS_MIN_CHARS || phrase.length > ASKED_AS_MAX_CHARS) {
      problems.push({ verdict: 'fail', text: `asked_as ${i + 1} has ${phrase.length} characters; keep each phrasing to ${ASKED_AS_MIN_CHARS}–${ASKED_AS_MAX_CHARS}.` });
    }
    if (asked.findIndex((other) => phraseKey(other) === phraseKey(phrase)) < i) {
      problems.push({ verdict: 'fail', text: `asked_as ${i + 1} repeats an earlier phrasing ("${phrase}").` });
    }
  });
  return result('asked_as', problems, `${asked.length} phrasings say how agents ask for it.`);
}

const NEGATIVE_LEAD = /^(?:(?:you\s+)?(?:should|must)\s+not|do\s+not|don't|never|avoid|stop|disable|refrain|no\s+longer|prefer\s+not)\b/i;

/** Whether a recommendation's first sentence tells the reader not to do something ("avoid X", "do not X"). */
export function recommendsAgainst(recommendation: string): boolean {
  const first = recommendation.trim().split(/(?<=[.!?])\s/)[0] ?? '';
  return NEGATIVE_LEAD.test(first.trim());
}

function sharesScope(record: RecordFile, other: Neighbour): boolean {
  if (record.topic !== other.topic) return false;
  const mine = record.applies_to.map((a) => canonicalTechnology(a.name));
  if (mine.length === 0 && other.technologies.length === 0) return true;
  return mine.some((name) => other.technologies.some((t) => sameTechnology(t, name)));
}

function conflictsGate({ record, neighbours }: GateInput): GateResult {
  const against = recommendsAgainst(record.recommendation);
  const problems = neighbours
    .filter((n) => n.similarity >= CONFLICT_SIMILARITY && !record.supersedes.includes(n.slug))
    .filter((n) => sharesScope(record, n) && recommendsAgainst(n.recommendation) !== against)
    .map((n) => ({
      verdict: 'warn' as const,
      text:
        `May contradict approved record "${n.slug}" ("${n.title}"): same topic and technologies, similar text ` +
        `(${n.similarity.toFixed(2)}), opposite advice. Decide which stands: deprecate one, or narrow their conditions so both hold.`,
    }));
  return result('conflicts', problems, 'No approved record on the same topic and technologies gives the opposite advice.');
}

const GATES: Readonly<Record<GateCode, (input: GateInput) => GateResult>> = {
  evidence: evidenceGate,
  source_authority: authorityGate,
  freshness: freshnessGate,
  license: licenseGate,
  version_scope: versionScopeGate,
  duplicates: duplicatesGate,
  conflicts: conflictsGate,
  asked_as: askedAsGate,
};

const RANK: Readonly<Record<Verdict, number>> = { pass: 0, warn: 1, fail: 2 };

export function worstVerdict(verdicts: readonly Verdict[]): Verdict {
  return verdicts.reduce<Verdict>((worst, v) => (RANK[v] > RANK[worst] ? v : worst), 'pass');
}

export function runGates(input: GateInput): GateReport {
  const gates = GATE_CODES.map((code) => GATES[code](input));
  return { slug: input.record.slug, verdict: worstVerdict(gates.map((g) => g.verdict)), gates };
}
