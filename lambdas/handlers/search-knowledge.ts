/**
 * Lambda entry of `search_knowledge`: the Data API as the search role, the pepper
 * for query hashes and cache keys, Bedrock for query embeddings and, when
 * `CHATCTX_RERANKER` names one, a Bedrock reranker. Bedrock failures and timeouts
 * degrade the answer inside the core (keyword search, or the ranking without the
 * reranker), never to an error.
 * A warm function keeps answers and records per corpus generation (one read of the
 * generation per call tells it when they are stale). Search events past their
 * retention are deleted by the same function, at most once a day per warm instance.
 */
import { searchKnowledgeTool } from '../tools/search-knowledge-tool.ts';
import { toolLambda } from '../aws/tool-lambda.ts';
import { dataApiSql, lambdaEmbedder, lambdaRerankStep, pepperSecrets } from '../aws/aws-adapters.ts';
import { SearchCache } from '../retrieval/search-cache.ts';
import { DirectSearchEvents } from '../retrieval/search-events.ts';
import { readSetting } from '../config/settings.ts';

export const handler = toolLambda('chatctx-search-knowledge', (env, logger) => {
  const sql = dataApiSql(env);
  // One writer per warm function, so retention runs at most daily while searches do.
  const events = new DirectSearchEvents(sql, logger, readSetting(env, 'searchEventRetentionDays'));
  const driftDemotesConfidence = readSetting(env, 'driftDemotesConfidence');
  return searchKnowledgeTool({
    sql,
    secrets: pepperSecrets(env),
    embedder: lambdaEmbedder(env),
    ...lambdaRerankStep(env),
    logger,
    cache: new SearchCache(),
    events,
    driftDemotesConfidence,
  });
});
