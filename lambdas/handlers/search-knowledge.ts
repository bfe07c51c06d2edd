/**
 * Lambda entry of `search_knowledge`: the Data API as the search role, the pepper
 * for query hashes and cache keys, and Bedrock for query embeddings. Bedrock
 * failures and timeouts degrade to keyword search inside the core, never to an error.
 * A warm function keeps answers and records per corpus generation (one read of the
 * generation per call tells it when they are stale).
 */
import { searchKnowledgeTool } from '../tools/search-knowledge-tool.ts';
import { toolLambda } from '../aws/tool-lambda.ts';
import { dataApiSql, lambdaEmbedder, pepperSecrets } from '../aws/aws-adapters.ts';
import { SearchCache } from '../retrieval/search-cache.ts';

export const handler = toolLambda('chatctx-search-knowledge', (env, logger) =>
  searchKnowledgeTool({ sql: dataApiSql(env), secrets: pepperSecrets(env), embedder: lambdaEmbedder(env), logger, cache: new SearchCache() }),
);
