/**
 * What a calibration needs from a store: for each evaluation question, the judged
 * candidates as `search_knowledge` scores them before any profile decides (slug,
 * evidence, boosted score, version exclusion), in hybrid mode (the store's encoder)
 * or keyword mode. A profile is then fitted and replayed on these without touching
 * the store again (bin/eval/calibrate.ts). Runs where the store is: in process,
 * behind the local admin endpoint, or in the admin Lambda of a deployed stack.
 *
 * Question text is used to search and is neither logged nor stored; query
 * embeddings land in the embedding cache under their keyed hash, as a search's do.
 */
import type { Sql } from '../ports/sql.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Secrets } from '../ports/secrets.ts';
import { searchKnowledgeInput, type SearchKnowledgeInput } from '../../schema/tools.ts';
import { effectiveSynonyms } from '../records/query-synonyms.ts';
import { loadApprovedByIds } from '../records/record-read.ts';
import { embedQuery } from './query-embedding.ts';
import { rankCandidates } from './rank.ts';
import { JUDGED_CANDIDATES, type Features, type ProfileName } from './relevance.ts';
import { CANDIDATE_POOL } from './search-service.ts';
import { profileNameOf } from './relevance-profiles.ts';
import { scoreCandidates, searchContext } from './selection.ts';

export interface ReplayCandidate {
  readonly slug: string;
  readonly features: Features;
  readonly boosted: number;
  /** A requested version is outside the record's constraint (it is shown last, with a note). */
  readonly note?: string;
}

export interface QuestionReplay {
  readonly candidates: readonly ReplayCandidate[];
  readonly maxResults: number;
  /** Whether a query vector was used (false in keyword mode, or when the encoder failed). */
  readonly vector: boolean;
}

export interface ReplaySet {
  /** The profile these replays calibrate: the encoder's in hybrid mode, `none` in keyword mode. */
  readonly profile: ProfileName;
  readonly embedder: { model: string; dimensions: number } | null;
  readonly replays: readonly QuestionReplay[];
}

export interface ReplayDeps {
  readonly sql: Sql;
  readonly secrets: Secrets;
  readonly embedder?: Embedder;
}

export async function replayQuestions(deps: ReplayDeps, questions: readonly unknown[], mode: 'hybrid' | 'keyword'): Promise<ReplaySet> {
  const embedder = mode === 'hybrid' ? deps.embedder : undefined;
  const synonyms = await effectiveSynonyms(deps.sql);
  const replays: QuestionReplay[] = [];
  for (const question of questions) {
    const input: SearchKnowledgeInput = searchKnowledgeInput.parse(question);
    const vector = embedder ? (await embedQuery({ ...deps, embedder }, input.query)).vector : undefined;
    const ranking = await rankCandidates(deps.sql, input.query, vector, { mode: 'hybrid', filter: {}, pool: CANDIDATE_POOL, synonyms });
    const ids = ranking.candidates.slice(0, JUDGED_CANDIDATES).map((c) => c.id);
    const records = new Map((await loadApprovedByIds(deps.sql, ids)).map((r) => [r.id, r]));
    const scored = scoreCandidates(ranking, records, searchContext(input, ranking.analysis));
    replays.push({
      candidates: scored.map((s) => ({ slug: s.record.slug, features: s.features, boosted: s.boosted, note: s.note })),
      maxResults: input.max_results,
      vector: vector !== undefined,
    });
  }
  return {
    profile: embedder ? profileNameOf(embedder) : 'none',
    embedder: embedder ? { model: embedder.model, dimensions: embedder.dimensions } : null,
    replays,
  };
}
