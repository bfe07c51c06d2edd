/**
 * Fitting a relevance profile: the logistic fit learns which evidence separates
 * relevant candidates from the rest, the threshold lands where the tune questions
 * are answered best, and the profile chosen for a search follows the encoder.
 */
import { describe, expect, it } from 'vitest';
import { calibrate, fitLogistic, objective } from '../../bin/eval/calibrate.ts';
import type { GuidanceQuestion } from '../../bin/eval/guidance-eval.ts';
import { FEATURES, relevanceProbability, relevanceProfileSchema, type Features } from '../../lambdas/retrieval/relevance.ts';
import { DEFAULT_PROFILES, profileFor, profileNameOf } from '../../lambdas/retrieval/relevance-profiles.ts';
import type { QuestionReplay } from '../../lambdas/retrieval/relevance-replay.ts';

/** A fixed pseudo-random sequence (xorshift), so the data and the fit are the same every run. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) % 10_000) / 10_000;
  };
}

const features = (values: Partial<Features>): Features => ({ ...(Object.fromEntries(FEATURES.map((f) => [f, 0])) as Features), ...values });

describe('calibration', () => {
  it('fits weights that separate the classes, with the sign of the evidence', () => {
    const next = random(7);
    const rows = Array.from({ length: 400 }, () => {
      const y = next() < 0.5 ? 1 : 0;
      return { x: [y ? 0.6 + 0.4 * next() : 0.5 * next(), next()], y };
    });
    const fit = fitLogistic(rows);
    expect(fit.weights[0]).toBeGreaterThan(5);
    expect(Math.abs(fit.weights[1]!)).toBeLessThan(1.5);
    const p = (x0: number) => 1 / (1 + Math.exp(-(fit.weights[0]! * x0 + fit.weights[1]! * 0.5 + fit.bias)));
    expect(p(0.9)).toBeGreaterThan(0.9);
    expect(p(0.1)).toBeLessThan(0.1);
  });

  it('chooses the threshold that answers covered questions and refuses uncovered ones', () => {
    const next = random(11);
    const questions: GuidanceQuestion[] = [];
    const replays: QuestionReplay[] = [];
    for (let i = 0; i < 120; i++) {
      const covered = i % 3 !== 0;
      questions.push({ id: `q${i}`, query: 'question', relevant: covered ? { right: 2 } : {} });
      // Covered questions' right record has high coverage; uncovered questions' best candidate does not.
      const top = covered ? 0.55 + 0.45 * next() : 0.5 * next();
      replays.push({
        candidates: [
          { slug: covered ? 'right' : 'near', features: features({ coverage: top, margin: 0.3 }), boosted: 1 },
          { slug: 'other', features: features({ coverage: 0.3 * next(), margin: -0.3 }), boosted: 0.5 },
        ],
        maxResults: 5,
        vector: false,
      });
    }
    const { profile, tune } = calibrate({ profile: 'none', embedder: null, questions, replays });
    expect(relevanceProfileSchema.safeParse(profile).success).toBe(true);
    expect(profile.calibrated).toBe(true);
    expect(tune.right_first).toBeGreaterThan(0.95);
    expect(tune.no_match_uncovered).toBeGreaterThan(0.95);
    expect(objective(tune)).toBeGreaterThan(1.9);
    expect(profile.weights).not.toHaveProperty('similarity');
  });

  it('uses the encoder profile only with a query vector and only if it was fitted on that encoder', () => {
    const useLite = { provider: 'use-lite', model: 'universal-sentence-encoder-lite', dimensions: 512 };
    const titan = { provider: 'bedrock', model: 'amazon.titan-embed-text-v2:0', dimensions: 512 };
    expect(profileNameOf(useLite)).toBe('use-lite');
    expect(profileNameOf(titan)).toBe('titan-v2');
    expect(profileFor(DEFAULT_PROFILES, useLite, true).profile).toBe('use-lite');
    expect(profileFor(DEFAULT_PROFILES, useLite, false).profile).toBe('none');
    expect(profileFor(DEFAULT_PROFILES, { ...useLite, dimensions: 256 }, true).profile).toBe('none');
    // Titan's default is the keyword profile's weights until a stack calibrates it.
    const titanProfile = profileFor(DEFAULT_PROFILES, titan, true);
    expect(titanProfile).toMatchObject({ profile: 'titan-v2', calibrated: false });
    expect(titanProfile.weights).toEqual(DEFAULT_PROFILES.none.weights);
    const evidence = features({ coverage: 0.8, similarity: 0.9, margin: 0.4 });
    expect(relevanceProbability(evidence, titanProfile)).toBe(relevanceProbability({ ...evidence, similarity: 0 }, titanProfile));
  });
});
