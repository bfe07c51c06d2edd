/**
 * Configuration of the local runtime, read once from the environment. Invalid
 * values stop the start with a message naming the variable (fail fast), never a
 * silent default.
 */
import { resolve } from 'node:path';
import { LOOPBACK_HOSTS } from '../protocol/request-guards.ts';
import { readEmbeddingProvider, type EmbeddingProvider } from '../embeddings/embedder-factory.ts';

function embeddingProvider(env: NodeJS.ProcessEnv): EmbeddingProvider {
  try {
    return readEmbeddingProvider(env, 'use-lite');
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

export interface LocalConfig {
  /** @default 127.0.0.1 (HOST) */
  readonly host: string;
  /** @default 8787 (PORT) */
  readonly port: number;
  /** @default ./.chatctx (CHATCTX_DATA_DIR) */
  readonly dataDir: string;
  /** Tool calls per guest IP per UTC day; 0 disables guests. @default 250 (CHATCTX_GUEST_DAILY_LIMIT) */
  readonly guestDailyLimit: number;
  /** Host header allow-list: loopback names, HOST, plus CHATCTX_ALLOWED_HOSTS. */
  readonly allowedHosts: readonly string[];
  /** Origin allow-list: this server's own origins plus CHATCTX_ALLOWED_ORIGINS. */
  readonly allowedOrigins: readonly string[];
  /** Peers whose X-Forwarded-For is believed (CHATCTX_TRUSTED_PROXIES). @default none */
  readonly trustedProxies: readonly string[];
  /** Seconds between `: keepalive` comments on GET streams. @default 25 (CHATCTX_KEEPALIVE_SECONDS) */
  readonly keepAliveSeconds: number;
  /** Load `guidance/` on the first start of an empty store. @default true (CHATCTX_STARTER_CORPUS=0 to skip) */
  readonly loadStarterCorpus: boolean;
  /** Embedding provider (CHATCTX_EMBEDDINGS): use-lite, bedrock or none. @default use-lite */
  readonly embeddings: EmbeddingProvider;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

function list(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0);
}

export function readLocalConfig(env: NodeJS.ProcessEnv = process.env): LocalConfig {
  const host = env.HOST && env.HOST.trim() !== '' ? env.HOST.trim() : '127.0.0.1';
  const port = integer(env, 'PORT', 8787, 0, 65535);
  const keepAliveSeconds = integer(env, 'CHATCTX_KEEPALIVE_SECONDS', 25, 1, 25);
  const ownHosts = ['0.0.0.0', '::'].includes(host) ? [] : [host.includes(':') ? `[${host}]` : host];
  const hosts = [...LOOPBACK_HOSTS, ...ownHosts, ...list(env, 'CHATCTX_ALLOWED_HOSTS')];
  const origins = hosts.filter((h) => h !== '*').flatMap((h) => [`http://${h}:${port}`]);
  return {
    host,
    port,
    dataDir: resolve(env.CHATCTX_DATA_DIR && env.CHATCTX_DATA_DIR.trim() !== '' ? env.CHATCTX_DATA_DIR : '.chatctx'),
    guestDailyLimit: integer(env, 'CHATCTX_GUEST_DAILY_LIMIT', 250, 0, 10_000_000),
    allowedHosts: [...new Set(hosts)],
    allowedOrigins: [...new Set([...origins, ...list(env, 'CHATCTX_ALLOWED_ORIGINS')])],
    trustedProxies: list(env, 'CHATCTX_TRUSTED_PROXIES'),
    keepAliveSeconds,
    loadStarterCorpus: env.CHATCTX_STARTER_CORPUS !== '0',
    embeddings: embeddingProvider(env),
  };
}
