/**
 * The local server's settings: a reranker is refused at start with a message
 * naming the variable, rather than silently ignored (the local server has none).
 */
import { describe, expect, it } from 'vitest';
import { readLocalConfig } from '../../lambdas/local/local-config.ts';
import { ConfigError } from '../../lambdas/config/settings.ts';

describe('local settings', () => {
  it('refuses CHATCTX_RERANKER other than none, naming it, and starts without it', () => {
    const refused = () => readLocalConfig({ CHATCTX_RERANKER: 'cohere.rerank-v3-5:0' });
    expect(refused).toThrow(ConfigError);
    expect(refused).toThrow(/CHATCTX_RERANKER: the local server has no reranker/);
    expect(readLocalConfig({ CHATCTX_RERANKER: 'none' }).port).toBeGreaterThan(0);
    expect(readLocalConfig({}).oauthRegistrationsTotalPerHour).toBe(60);
  });
});
