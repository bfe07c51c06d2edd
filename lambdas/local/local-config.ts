/**
 * The local runtime's configuration: its settings (`config/settings.ts`) read once,
 * plus what follows from them: the Host and Origin allow-lists of a server bound to
 * `HOST:PORT`. A bad value stops the start with a `ConfigError` naming the variable.
 */
import { resolve } from 'node:path';
import { ConfigError, SETTINGS, readSetting, readSettings, type Environment, type EmbeddingProvider } from '../config/settings.ts';
import { LOOPBACK_HOSTS } from '../protocol/request-guards.ts';

export interface LocalConfig {
  readonly host: string;
  readonly port: number;
  /** Absolute path of the data directory. */
  readonly dataDir: string;
  /** Tool calls per guest IP per UTC day; 0 disables guests. */
  readonly guestDailyLimit: number;
  /** Host header allow-list: loopback names, HOST, plus CHATCTX_ALLOWED_HOSTS. */
  readonly allowedHosts: readonly string[];
  /** Origin allow-list: this server's own origins plus CHATCTX_ALLOWED_ORIGINS. */
  readonly allowedOrigins: readonly string[];
  /** Peers whose X-Forwarded-For is believed. */
  readonly trustedProxies: readonly string[];
  /** Seconds between `: keepalive` comments on GET streams. */
  readonly keepAliveSeconds: number;
  /** Seconds a client has to send a whole request. */
  readonly requestTimeoutSeconds: number;
  /** Load `guidance/` on the first start of an empty store. */
  readonly loadStarterCorpus: boolean;
  readonly embeddings: EmbeddingProvider;
  /** Bedrock model, when `embeddings` is `bedrock`. */
  readonly bedrockModelId: string;
  /** Days search events are kept. */
  readonly searchEventRetentionDays: number;
  /** Let `records verify` fetch loopback and private addresses. */
  readonly sourcesPrivateAddresses: boolean;
  /** Hours between background source checks; 0 for none. */
  readonly sourceCheckIntervalHours: number;
  readonly storeBuffersMb: number;
  /** Where the keyword side is scored: a copy in memory, or the store's statement. */
  readonly keywordIndex: 'memory' | 'store';
  /** Show records whose evidence drifted with their confidence one step lower. */
  readonly driftDemotesConfidence: boolean;
  /** OAuth redirect URIs allowed besides loopback ones. */
  readonly oauthRedirectAllowlist: readonly string[];
  /** OAuth client registrations per client IP per hour. */
  readonly oauthRegistrationsPerHour: number;
  /** OAuth client registrations per hour from all addresses together. */
  readonly oauthRegistrationsTotalPerHour: number;
  /** Unconfirmed OAuth client registrations held at most. */
  readonly oauthPendingClientsMax: number;
}

export function readLocalConfig(env: Environment = process.env): LocalConfig {
  // The reranker is a Bedrock service the local server does not call: refuse it rather than ignore it.
  if (readSetting(env, 'reranker') !== 'none') {
    throw new ConfigError(SETTINGS.reranker.env, `${SETTINGS.reranker.env}: the local server has no reranker (it runs on AWS only, with chatctx:reranker); unset it or set it to none.`);
  }
  const s = readSettings(env, [
    'host',
    'port',
    'dataDir',
    'guestDailyLimit',
    'allowedHosts',
    'allowedOrigins',
    'trustedProxies',
    'keepAliveSeconds',
    'requestTimeoutSeconds',
    'starterCorpus',
    'embeddings',
    'bedrockModelId',
    'searchEventRetentionDays',
    'sourcesPrivateAddresses',
    'sourceCheckIntervalHours',
    'storeBuffersMb',
    'keywordIndex',
    'driftDemotesConfidence',
    'oauthRedirectAllowlist',
    'oauthRegistrationsPerHour',
    'oauthRegistrationsTotalPerHour',
    'oauthPendingClientsMax',
  ]);
  const ownHosts = ['0.0.0.0', '::'].includes(s.host) ? [] : [s.host.includes(':') ? `[${s.host}]` : s.host];
  const hosts = [...LOOPBACK_HOSTS, ...ownHosts, ...s.allowedHosts];
  const origins = hosts.filter((h) => h !== '*').map((h) => `http://${h}:${s.port}`);
  return {
    host: s.host,
    port: s.port,
    dataDir: resolve(s.dataDir),
    guestDailyLimit: s.guestDailyLimit,
    allowedHosts: [...new Set(hosts)],
    allowedOrigins: [...new Set([...origins, ...s.allowedOrigins])],
    trustedProxies: s.trustedProxies,
    keepAliveSeconds: s.keepAliveSeconds,
    requestTimeoutSeconds: s.requestTimeoutSeconds,
    loadStarterCorpus: s.starterCorpus,
    embeddings: s.embeddings,
    bedrockModelId: s.bedrockModelId,
    searchEventRetentionDays: s.searchEventRetentionDays,
    sourcesPrivateAddresses: s.sourcesPrivateAddresses,
    sourceCheckIntervalHours: s.sourceCheckIntervalHours,
    storeBuffersMb: s.storeBuffersMb,
    keywordIndex: s.keywordIndex,
    driftDemotesConfidence: s.driftDemotesConfidence,
    oauthRedirectAllowlist: s.oauthRedirectAllowlist,
    oauthRegistrationsPerHour: s.oauthRegistrationsPerHour,
    oauthRegistrationsTotalPerHour: s.oauthRegistrationsTotalPerHour,
    oauthPendingClientsMax: s.oauthPendingClientsMax,
  };
}
