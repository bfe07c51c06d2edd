/**
 * When a candidate is shown: the relevance policy. A small logistic model over
 * evidence retrieval already has (how much of the question's subject the record
 * contains, how close its best passage is, how it ranks against the others, whether
 * it declares the stack the question names) gives each candidate a probability of
 * answering the question; candidates at or above the profile's threshold are
 * admitted, and after the request's boosts those under `minShareOfTop` of the best
 * are the weak tail. Nothing admitted is `no_match`.
 *
 * The weights are fitted per embedder profile (`use-lite`, `titan-v2`, `none`), since
 * one encoder's cosine is not another's: `npm run eval:guidance -- --calibrate` fits
 * them on the tune half of the evaluation questions (bin/eval/calibrate.ts).
 * This module computes and applies; it never reads the store (relevance-profiles.ts does).
 */
import { z } from 'zod';
import type { RankedCandidate } from './rank.ts';
import type { QueryConcepts } from './coverage.ts';

export const FEATURES = [
  'coverage',
  'knownCoverage',
  'absentShare',
  'similarity',
  'coverageSimilarity',
  'lexical',
  'fused',
  'techMatch',
  'otherStack',
  'matchedShare',
  'specificity',
  'phraseCoverage',
  'margin',
  'similarityMargin',
] as const;
export type Feature = (typeof FEATURES)[number];
export type Features = Record<Feature, number>;

export const PROFILE_NAMES = ['use-lite', 'titan-v2', 'none'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

const finite = z.number().refine(Number.isFinite, 'must be a finite number');

export const relevanceProfileSchema = z.strictObject({
  profile: z.enum(PROFILE_NAMES),
  /** Logistic weights per feature (absent: 0) and the intercept. */
  weights: z.partialRecord(z.enum(FEATURES), finite),
  bias: finite,
  /** Admit a candidate whose probability is at least this. */
  threshold: z.number().min(0).max(1),
  /** After the boosts, results under this share of the best score are cut. */
  minShareOfTop: z.number().min(0).max(1),
  /** The encoder whose cosine the weights were fitted on; a profile fitted on another is not used. */
  embedder: z.strictObject({ model: z.string().min(1).max(200), dimensions: z.number().int().min(1).max(10_000) }).nullable(),
  /** False for a default that was never fitted on this encoder's cosine (titan-v2 until a platform team calibrates it). */
  calibrated: z.boolean(),
  /** How it was fitted: questions, halves and the figures on them, for `policy list` and the README. */
  fitted: z.record(z.string(), z.unknown()).optional(),
});
export type RelevanceProfile = z.output<typeof relevanceProfileSchema>;

/** Candidates judged per question: the admission looks no deeper than any answer can reach. */
export const JUDGED_CANDIDATES = 15;

/** What the question says about its stack, for the technology features. */
export interface StackSignal {
  /** Canonical technologies requested or named in the text. */
  readonly named: readonly string[];
  /** Whether a record declares one of them. */
  readonly matches: (appliesTo: readonly string[]) => boolean;
  /** Whether a record is written for another stack of a family the question names (records/technology-vocabulary.ts). */
  readonly otherStack: (appliesTo: readonly string[]) => boolean;
}

/** The evidence on one candidate, in 0..1 (booleans as 0 or 1). */
export function candidateFeatures(
  candidate: RankedCandidate,
  best: { bm25: number; score: number },
  /** The fused score and similarity of the candidate's rival (selection.ts measures against the third best of the others). */
  others: { score: number; similarity: number },
  query: QueryConcepts,
  appliesTo: readonly string[],
  stack: StackSignal,
): Features {
  const similarity = candidate.similarity ?? 0;
  const techMatch = stack.named.length > 0 && stack.matches(appliesTo);
  return {
    coverage: candidate.coverage,
    knownCoverage: candidate.knownCoverage,
    absentShare: query.absentShare,
    similarity,
    coverageSimilarity: candidate.coverage * Math.max(0, similarity),
    lexical: best.bm25 > 0 ? candidate.bm25 / best.bm25 : 0,
    fused: best.score > 0 ? candidate.score / best.score : 0,
    techMatch: techMatch ? 1 : 0,
    otherStack: !techMatch && stack.otherStack(appliesTo) ? 1 : 0,
    matchedShare: candidate.matchedShare,
    specificity: candidate.specificity,
    phraseCoverage: candidate.phraseCoverage,
    margin: candidate.score > 0 ? Math.max(-1, (candidate.score - others.score) / candidate.score) : -1,
    similarityMargin: candidate.similarity === undefined ? 0 : candidate.similarity - others.similarity,
  };
}

/** The model's probability that the candidate answers the question. */
export function relevanceProbability(features: Features, profile: Pick<RelevanceProfile, 'weights' | 'bias'>): number {
  let z = profile.bias;
  for (const feature of FEATURES) z += (profile.weights[feature] ?? 0) * features[feature];
  return 1 / (1 + Math.exp(-z));
}
