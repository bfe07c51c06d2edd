/**
 * Lambda entry of `search_knowledge`: Data API (search role), the pepper for query
 * hashes and cache keys, and Bedrock Titan V2 for query embeddings. Bedrock failures
 * and timeouts degrade to keyword search inside the core, never to an error.
 */
import { searchKnowledgeTool } from '../tools/search-knowledge-tool.ts';
import { toolLambda } from '../aws/tool-lambda.ts';
import { DataApiSql } from '../storage/data-api-sql.ts';
import { SecretsManagerSecrets } from '../secrets/secrets-manager-secrets.ts';
import { BedrockEmbedder } from '../embeddings/bedrock-embedder.ts';
import { databaseEnv, requiredEnv } from '../aws/environment.ts';

export const handler = toolLambda('chatctx-search-knowledge', (env, logger) => {
  const secrets = new SecretsManagerSecrets({ secretId: requiredEnv(env, 'PEPPER_SECRET_ARN') });
  const embedder = env.EMBEDDINGS_PROVIDER === 'none' ? undefined : new BedrockEmbedder({ modelId: env.BEDROCK_MODEL_ID });
  return searchKnowledgeTool({ sql: new DataApiSql(databaseEnv(env)), pepper: () => secrets.pepper(), embedder, logger });
});
