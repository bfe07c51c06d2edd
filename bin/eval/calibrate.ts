/**
 * Fits a relevance profile (lambdas/retrieval/relevance.ts) on the tune half of the
 * evaluation questions, from replays a store computed (relevance-replay.ts):
 *
 * 1. the logistic weights: every judged candidate of every tune question is one
 *    example, labelled by whether the question's judges graded its record relevant;
 *    an L2-regularised logistic regression over the profile's features, solved by
 *    Newton's method (ten features and a few thousand rows: a closed loop of
 *    linear algebra, deterministic, no dependency worth its weight);
 * 2. the admission threshold and the tail cut: a grid, each point replayed on the
 *    tune questions as an agent would see the answers, scored by `objective`.
 *
 * Only tune-half questions are read here; the test half is for the final table.
 */
import { FEATURES, type Feature, type ProfileName, type RelevanceProfile } from '../../lambdas/retrieval/relevance.ts';
import type { QuestionReplay } from '../../lambdas/retrieval/relevance-replay.ts';
import { honestyMetrics, replayAnswers, type GuidanceQuestion, type HonestyMetrics } from './guidance-eval.ts';

/** A profile without an encoder never sees a cosine: its weights leave the dense features out. */

export const PROFILE_FEATURES: Readonly<Record<ProfileName, readonly Feature[]>> = {
  'use-lite': FEATURES,
  'titan-v2': FEATURES,
  none: FEATURES.filter((f) => f !== 'similarity' && f !== 'coverageSimilarity' && f !== 'similarityMargin'),
};

/** Ridge penalty on the weights (not the intercept). */
const L2 = 1;
const THRESHOLDS = Array.from({ length: 37 }, (_, i) => Math.round((0.05 + i * 0.025) * 1000) / 1000);
const TAIL_SHARES = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95];

/**
 * What a profile is worth on the tune questions, as an agent would score its answers:
 * the right record first gains, a wrong record first loses as much, `no_match` gains
 * nothing on a covered question; on an uncovered one `no_match` is right and any
 * record shown is wrong. Each is a share, so covered and uncovered questions weigh
 * alike; up to a constant that is right first − wrong first + `no_match` on uncovered.
 * A tenth of nDCG@10 and precision breaks ties in favour of better tails.
 */
export function objective(m: HonestyMetrics): number {
  return m.right_first - m.wrong_first + m.no_match_uncovered + 0.1 * (m.ndcg_at_10 + m.precision_shown);
}

/** Solves `a x = b` (small, symmetric positive definite) by Gaussian elimination with partial pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = col + 1; r < n; r++) {
      const f = m[r]![col]! / m[col]![col]!;
      for (let c = col; c <= n; c++) m[r]![c]! -= f * m[col]![c]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let sum = m[r]![n]!;
    for (let c = r + 1; c < n; c++) sum -= m[r]![c]! * x[c]!;
    x[r] = sum / m[r]![r]!;
  }
  return x;
}

/** L2-regularised logistic regression by Newton's method; the last coefficient is the intercept. */
export function fitLogistic(rows: readonly { x: readonly number[]; y: number }[], l2 = L2, iterations = 50): { weights: number[]; bias: number } {
  const d = (rows[0]?.x.length ?? 0) + 1;
  let beta = new Array<number>(d).fill(0);
  for (let it = 0; it < iterations; it++) {
    const grad = new Array<number>(d).fill(0);
    const hess = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const row of rows) {
      const x = [...row.x, 1];
      const p = 1 / (1 + Math.exp(-x.reduce((s, v, i) => s + v * beta[i]!, 0)));
      const w = Math.max(p * (1 - p), 1e-9);
      for (let i = 0; i < d; i++) {
        grad[i]! += (p - row.y) * x[i]!;
        for (let j = 0; j < d; j++) hess[i]![j]! += w * x[i]! * x[j]!;
      }
    }
    for (let i = 0; i < d - 1; i++) {
      grad[i]! += l2 * beta[i]!;
      hess[i]![i]! += l2;
    }
    const step = solve(hess, grad);
    beta = beta.map((b, i) => b - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-8) break;
  }
  return { weights: beta.slice(0, -1), bias: beta.at(-1)! };
}

export interface CalibrationInput {
  readonly profile: ProfileName;
  readonly embedder: RelevanceProfile['embedder'];
  /** Tune-half questions and their replays, in the same order. */
  readonly questions: readonly GuidanceQuestion[];
  readonly replays: readonly QuestionReplay[];
}

export interface Calibration {
  readonly profile: RelevanceProfile;
  readonly tune: HonestyMetrics;
  readonly objective: number;
}

const round = (v: number) => Math.round(v * 1e4) / 1e4;

export function calibrate(input: CalibrationInput, fitted: Record<string, unknown> = {}): Calibration {
  const features = PROFILE_FEATURES[input.profile];
  const rows = input.replays.flatMap((replay, i) =>
    replay.candidates.map((c) => ({ x: features.map((f) => c.features[f]), y: (input.questions[i]!.relevant[c.slug] ?? 0) > 0 ? 1 : 0 })),
  );
  const fit = fitLogistic(rows);
  const weights = Object.fromEntries(features.map((f, i) => [f, round(fit.weights[i]!)])) as RelevanceProfile['weights'];
  const base = { profile: input.profile, weights, bias: round(fit.bias), embedder: input.embedder, calibrated: true };
  let best: Calibration | undefined;
  for (const threshold of THRESHOLDS) {
    for (const minShareOfTop of TAIL_SHARES) {
      const profile: RelevanceProfile = { ...base, threshold, minShareOfTop };
      const tune = honestyMetrics(replayAnswers(input.questions, input.replays, profile));
      const score = objective(tune);
      if (!best || score > best.objective) best = { profile, tune, objective: score };
    }
  }
  const chosen = best!;
  return {
    ...chosen,
    profile: {
      ...chosen.profile,
      fitted: { ...fitted, at: new Date().toISOString(), examples: rows.length, questions: input.questions.length, objective: round(chosen.objective), tune: chosen.tune },
    },
  };
}
