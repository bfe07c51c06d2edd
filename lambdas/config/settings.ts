/**
 * Every setting chatctx reads from its environment, defined once: the variable's
 * name, its type and bounds, its default and what it means, for both runtimes.
 *
 * The local server, the CLI and the Lambda entries read settings only through
 * `readSetting`, and the CDK stack takes the variable names it sets from here, so a
 * name or a default cannot drift between the two runtimes
 * (`test/architecture/settings.test.ts` fails on any other read of the environment
 * and on any setting name spelled outside this module). The settings
 * table is rendered from `SETTINGS` by `renderSettingsTable`.
 *
 * A value that is present but wrong stops the process at start (or the Lambda at
 * its cold start) with a `ConfigError` naming the variable; an absent value takes
 * the default, and an absent required value is an error too. Nothing here decides
 * policy: derived values (the local Host allow-list, say) are the runtime's job.
 */

/** A bad or missing setting; `variable` names the environment variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(message);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

export type Runtime = 'local' | 'aws';
export type Environment = Readonly<Record<string, string | undefined>>;

export interface Setting<T> {
  /** The environment variable. */
  readonly env: string;
  /** Where it is read. On AWS the stack sets every variable its functions read. */
  readonly runtimes: readonly Runtime[];
  /** What it means, for the settings table (docs/configuration.md). */
  readonly description: string;
  /** The default as the settings table shows it; `undefined` for a required setting. */
  readonly defaultText: string | undefined;
  /** The value the default stands for (`undefined` for a required setting). */
  readonly defaultValue: T | undefined;
  /** Parses a present, non-blank value; throws a message on a bad one. */
  readonly parse: (raw: string) => T;
}

interface Common {
  readonly env: string;
  readonly runtimes: readonly Runtime[];
  readonly description: string;
}

function setting<T>(common: Common, parse: (raw: string) => T, defaultValue: T | undefined, defaultText?: string): Setting<T> {
  return { ...common, parse, defaultValue, defaultText: defaultValue === undefined ? undefined : (defaultText ?? String(defaultValue)) };
}

function integer(common: Common & { readonly min: number; readonly max: number; readonly default: number }): Setting<number> {
  return setting(
    common,
    (raw) => {
      const value = Number(raw);
      if (!/^\s*-?\d+\s*$/.test(raw) || !Number.isSafeInteger(value) || value < common.min || value > common.max) {
        throw new Error(`must be a whole number from ${common.min} to ${common.max}`);
      }
      return value;
    },
    common.default,
  );
}

function text(common: Common & { readonly default?: string; readonly defaultText?: string }): Setting<string> {
  return setting(common, (raw) => raw.trim(), common.default, common.defaultText);
}

/** A comma-separated list, trimmed and lower-cased (host names, origins, addresses). */
function list(common: Common & { readonly defaultText: string }): Setting<readonly string[]> {
  return setting(
    common,
    (raw) =>
      raw
        .split(',')
        .map((item) => item.trim().toLowerCase())
        .filter((item) => item.length > 0),
    [],
    common.defaultText,
  );
}

function flag(common: Common & { readonly default: boolean }): Setting<boolean> {
  return setting(
    common,
    (raw) => {
      const value = raw.trim().toLowerCase();
      if (value === '1' || value === 'true') return true;
      if (value === '0' || value === 'false') return false;
      throw new Error('must be 1 or 0 (true or false)');
    },
    common.default,
    common.default ? '1' : '0',
  );
}

function oneOf<const T extends string>(common: Common & { readonly values: readonly T[]; readonly default: T }): Setting<T> {
  return setting(
    common,
    (raw) => {
      const value = raw.trim().toLowerCase();
      if (!(common.values as readonly string[]).includes(value)) {
        throw new Error(`must be one of ${common.values.join(', ')}; got ${JSON.stringify(raw)}`);
      }
      return value as T;
    },
    common.default,
  );
}

/** A JSON object of strings, e.g. `{"chatctx_search": "arn:…"}`. */
function stringMap(common: Common): Setting<Readonly<Record<string, string>>> {
  return setting(
    common,
    (raw) => {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        throw new Error('must be a JSON object');
      }
      if (!value || typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
        throw new Error('must be a JSON object of strings');
      }
      return value as Record<string, string>;
    },
    undefined,
  );
}

/** The documented OAuth callbacks of the claude.ai and ChatGPT connectors. */
export const OAUTH_CONNECTOR_CALLBACKS: readonly string[] = [
  'https://claude.ai/api/mcp/auth_callback',
  'https://claude.com/api/mcp/auth_callback',
  'https://chatgpt.com/connector_platform_oauth_redirect',
  'https://chatgpt.com/connector/oauth/*',
];

/** Redirect URI entries keep their case (paths are case-sensitive); each must be an https URL. */
function parseRedirectAllowlist(raw: string): readonly string[] {
  const entries = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  for (const entry of entries) {
    if (!/^https:\/\/[^/\s*]+\/\S*$/.test(entry)) throw new Error('must list https:// URLs with a path, comma-separated');
    // A wildcard only as a whole last segment: `https://host/path/*` (oauth/redirect-uris.ts).
    if (entry.includes('*') && !(entry.endsWith('/*') && entry.indexOf('*') === entry.length - 1)) throw new Error('may end in /* and hold no other *');
  }
  return entries;
}

/** The embedding providers: the bundled encoder, Bedrock, or none (keyword search only). */
export const EMBEDDING_PROVIDERS = ['use-lite', 'bedrock', 'none'] as const;
export type EmbeddingProvider = (typeof EMBEDDING_PROVIDERS)[number];

/** Amazon Titan Text Embeddings V2, asked for 512 dimensions (the width of every stored vector). */
export const TITAN_EMBED_TEXT_V2 = 'amazon.titan-embed-text-v2:0';

/** The reranker setting's value when searches run without one. */
export const NO_RERANKER = 'none';

/**
 * A Bedrock model id (`provider.name[:version]`) that names a reranker: the word
 * "rerank" is required so that an embedding or text model cannot be set by mistake.
 */
const RERANKER_MODEL_ID = /^[a-z0-9-]+\.[a-z0-9.-]*rerank[a-z0-9.-]*(:[0-9]+)?$/;

/** `none`, or a reranker model id, lower-cased (model ids are). Exported for the stack, which checks its context key with it. */
export function parseReranker(raw: string): string {
  const value = raw.trim().toLowerCase();
  if (value === NO_RERANKER || RERANKER_MODEL_ID.test(value)) return value;
  throw new Error('must be none or a Bedrock reranker model id such as cohere.rerank-v3-5:0 or amazon.rerank-v1:0');
}

const LOCAL: readonly Runtime[] = ['local'];
const AWS: readonly Runtime[] = ['aws'];
const BOTH: readonly Runtime[] = ['local', 'aws'];

export const SETTINGS = {
  port: integer({ env: 'PORT', runtimes: LOCAL, min: 0, max: 65_535, default: 8787, description: 'TCP port of the MCP endpoint; `0` picks a free one' }),
  host: text({ env: 'HOST', runtimes: LOCAL, default: '127.0.0.1', description: 'address the MCP endpoint binds to' }),
  dataDir: text({
    env: 'CHATCTX_DATA_DIR',
    runtimes: LOCAL,
    default: '.chatctx',
    description: 'the store (`pgdata/`), its `pepper`, the `lock` of the process using it, and while a server runs its `admin-token`; relative to the working directory',
  }),
  guestDailyLimit: integer({
    env: 'CHATCTX_GUEST_DAILY_LIMIT',
    runtimes: BOTH,
    min: 0,
    max: 10_000_000,
    default: 250,
    description: 'tool calls per guest IP per UTC day; `0` requires a key',
  }),
  allowedHosts: list({
    env: 'CHATCTX_ALLOWED_HOSTS',
    runtimes: BOTH,
    defaultText: 'none',
    description:
      '`Host` values accepted besides the runtime\'s own (locally the loopback names and `HOST`); comma-separated, `*` for any. The stack sets the API\'s execute-api host name plus the context key `chatctx:customDomains`',
  }),
  allowedOrigins: list({
    env: 'CHATCTX_ALLOWED_ORIGINS',
    runtimes: BOTH,
    defaultText: 'none',
    description: 'browser `Origin`s accepted besides the local server\'s own, e.g. `http://localhost:6274` for the Inspector UI; comma-separated',
  }),
  oauthRedirectAllowlist: setting(
    {
      env: 'CHATCTX_OAUTH_REDIRECT_ALLOWLIST',
      runtimes: BOTH,
      description:
        'OAuth redirect URIs a connector client may register or name (exact `https://` URLs; a last segment `/*` allows any path below it on the same host, without a query), comma-separated; `http://localhost`, `127.0.0.1` and `[::1]` on any port are always allowed for desktop clients. The default names the claude.ai and ChatGPT connector callbacks',
    },
    parseRedirectAllowlist,
    OAUTH_CONNECTOR_CALLBACKS,
    OAUTH_CONNECTOR_CALLBACKS.join(','),
  ),
  oauthRegistrationsPerHour: integer({
    env: 'CHATCTX_OAUTH_REGISTRATIONS_PER_HOUR',
    runtimes: BOTH,
    min: 1,
    max: 10_000,
    default: 10,
    description: 'OAuth client registrations accepted per client IP per hour (and five times that per UTC day); more get 429 with `Retry-After`',
  }),
  oauthRegistrationsTotalPerHour: integer({
    env: 'CHATCTX_OAUTH_REGISTRATIONS_TOTAL_PER_HOUR',
    runtimes: BOTH,
    min: 1,
    max: 100_000,
    default: 60,
    description:
      'OAuth client registrations accepted per hour from all addresses together, counted in the quota store before the database is touched; more get 503 with `Retry-After` (on AWS a flood of registrations from many addresses wakes Aurora for at most this many an hour)',
  }),
  oauthPendingClientsMax: integer({
    env: 'CHATCTX_OAUTH_PENDING_CLIENTS_MAX',
    runtimes: BOTH,
    min: 1,
    max: 1_000_000,
    default: 1000,
    description: 'OAuth clients registered but not yet used that the store holds at most (each expires 24 h after registration unless someone consents to it); more get 503 with `Retry-After`',
  }),
  trustedProxies: list({
    env: 'CHATCTX_TRUSTED_PROXIES',
    runtimes: LOCAL,
    defaultText: 'none',
    description: 'peer addresses whose `X-Forwarded-For` is believed; otherwise the socket address is the client IP',
  }),
  keepAliveSeconds: integer({
    env: 'CHATCTX_KEEPALIVE_SECONDS',
    runtimes: LOCAL,
    min: 1,
    max: 25,
    default: 25,
    description: 'seconds between `: keepalive` comments on GET streams',
  }),
  requestTimeoutSeconds: integer({
    env: 'CHATCTX_REQUEST_TIMEOUT_SECONDS',
    runtimes: LOCAL,
    min: 1,
    max: 600,
    default: 30,
    description: 'seconds a client has to send a whole request, headers and body (408 after that); answers, event streams included, are not cut',
  }),
  starterCorpus: flag({
    env: 'CHATCTX_STARTER_CORPUS',
    runtimes: LOCAL,
    default: true,
    description: 'load and approve `guidance/` on the first start of an empty store; `0` skips it',
  }),
  apiKey: text({
    env: 'CHATCTX_API_KEY',
    runtimes: LOCAL,
    default: '',
    defaultText: 'none',
    description: 'an API key for the project\'s own client scripts (`npm run inspect`, `npm run bench:load`) to send, so it never appears on a command line or in npm\'s echo of one',
  }),
  draftMaxBytes: integer({
    env: 'CHATCTX_DRAFT_MAX_BYTES',
    runtimes: LOCAL,
    min: 1024,
    max: 67_108_864,
    default: 2_097_152,
    description: 'largest page `records draft --from-url` reads, in bytes',
  }),
  draftTimeoutSeconds: integer({
    env: 'CHATCTX_DRAFT_TIMEOUT_SECONDS',
    runtimes: LOCAL,
    min: 1,
    max: 120,
    default: 10,
    description: 'seconds `records draft --from-url` waits for a page, redirects and body included',
  }),
  evidenceCheckDays: integer({
    env: 'CHATCTX_EVIDENCE_CHECK_DAYS',
    runtimes: BOTH,
    min: 1,
    max: 3650,
    default: 30,
    description: 'days a `records verify` check that found an excerpt missing from its page fails the evidence gate at approval (an older miss warns, a source never checked warns as unverified)',
  }),
  driftDemotesConfidence: flag({
    env: 'CHATCTX_DRIFT_DEMOTES_CONFIDENCE',
    runtimes: BOTH,
    default: false,
    description: 'while a source of an approved record was last found without its excerpt (a check since its approval), answers give the record\'s confidence one step lower (high → medium → low); the record stays published either way',
  }),
  keywordIndex: oneOf({
    env: 'CHATCTX_KEYWORD_INDEX',
    runtimes: LOCAL,
    values: ['memory', 'store'] as const,
    default: 'memory',
    description:
      '`memory`: the keyword side is scored from a copy of the BM25 tables held in the server\'s memory and, on a store of at most 10,000 passages, the dense side compared with a copy of the passage vectors, reloaded in the background after each change (answers from the store\'s statement until it is); `store`: by the store\'s statement on every search. The same answers either way, except that the copy compares every passage where the store may walk its HNSW graph (the exact answer the walk approximates)',
  }),
  storeBuffersMb: integer({
    env: 'CHATCTX_STORE_BUFFERS_MB',
    runtimes: LOCAL,
    min: 8,
    max: 4096,
    default: 32,
    description:
      "MiB of the embedded store's page cache (Postgres's `shared_buffers`) while the server runs, kept once touched; a page beyond it is read from the operating system's file cache. 32 holds the starter corpus several times over; a store of many thousand records may answer faster with more",
  }),
  sourceCheckIntervalHours: integer({
    env: 'CHATCTX_SOURCE_CHECK_INTERVAL_HOURS',
    runtimes: LOCAL,
    min: 0,
    max: 8760,
    default: 0,
    description: 'check every quoted excerpt against its page in the background every so many hours while the server runs (the first run soon after start when one is due); `0`, the default, never',
  }),
  sourcesPrivateAddresses: flag({
    env: 'CHATCTX_SOURCES_PRIVATE_ADDRESSES',
    runtimes: LOCAL,
    default: false,
    description: 'let `records draft --from-url` and `records verify` read pages on loopback and private addresses (an intranet copy of a public page); off, only public addresses are fetched',
  }),
  embeddings: oneOf({
    env: 'CHATCTX_EMBEDDINGS',
    runtimes: BOTH,
    values: EMBEDDING_PROVIDERS,
    default: 'use-lite',
    description:
      '`use-lite` (bundled, offline; local only), `bedrock` (Titan Text Embeddings V2, 512-d; needs AWS credentials; what the stack sets) or `none` (keyword search only)',
  }),
  bedrockModelId: text({
    env: 'CHATCTX_BEDROCK_MODEL_ID',
    runtimes: BOTH,
    default: TITAN_EMBED_TEXT_V2,
    description: 'the Bedrock embedding model (it must return 512-dimensional vectors)',
  }),
  // The reranker is wired on AWS only (lambdas/handlers/search-knowledge.ts); the local server refuses CHATCTX_RERANKER (local/local-config.ts).
  reranker: setting(
    {
      env: 'CHATCTX_RERANKER',
      runtimes: BOTH,
      description:
        '`none`, or a Bedrock reranker model (`cohere.rerank-v3-5:0` or `amazon.rerank-v1:0`, whichever the region offers) that reorders and admits the best candidates of each search. Read by the search function on AWS only; the local server refuses any value but `none` at start (it has no reranker); the stack sets it from the context key `chatctx:reranker`',
    },
    parseReranker,
    NO_RERANKER,
  ),
  rerankTimeoutMs: integer({
    env: 'CHATCTX_RERANK_TIMEOUT_MS',
    runtimes: BOTH,
    min: 100,
    max: 10_000,
    default: 1500,
    description: 'milliseconds a search waits for the reranker; past it, or on any reranker error, the answer is ranked without it and marked `degraded` (AWS only, with `CHATCTX_RERANKER`)',
  }),
  rerankCandidates: integer({
    env: 'CHATCTX_RERANK_CANDIDATES',
    runtimes: BOTH,
    min: 1,
    max: 100,
    default: 20,
    description: 'how many of the best-ranked candidates a search sends to the reranker; at most 100, the documents one Bedrock rerank query is billed for (AWS only, with `CHATCTX_RERANKER`)',
  }),
  searchEventRetentionDays: integer({
    env: 'CHATCTX_SEARCH_EVENT_RETENTION_DAYS',
    runtimes: BOTH,
    min: 1,
    max: 3650,
    default: 90,
    description: 'days search events are kept; older ones are deleted by `chatctx analytics`, by the local server at start and daily, and on AWS by the search function at most daily while it serves',
  }),
  freshnessWarnMonths: integer({
    env: 'CHATCTX_FRESHNESS_WARN_MONTHS',
    runtimes: BOTH,
    min: 1,
    max: 240,
    default: 18,
    description: 'the `freshness` gate warns when a record was last reviewed (`reviewed_at`) longer ago than this; `records stale` lists them',
  }),
  freshnessFailMonths: integer({
    env: 'CHATCTX_FRESHNESS_FAIL_MONTHS',
    runtimes: BOTH,
    min: 1,
    max: 480,
    default: 36,
    description: '…and fails (blocks approval) when it was longer ago than this',
  }),
  excerptMaxWords: integer({
    env: 'CHATCTX_EXCERPT_MAX_WORDS',
    runtimes: BOTH,
    min: 8,
    max: 500,
    default: 50,
    description: 'the longest evidence excerpt the `license` gate accepts, in words (a short quote keeps the corpus publishable)',
  }),
  defaultLicense: text({
    env: 'CHATCTX_DEFAULT_LICENSE',
    runtimes: BOTH,
    default: 'CC-BY-4.0',
    description: 'the licence of a record that states none (the `license` gate warns); `none` makes a missing licence fail',
  }),
  reviewer: text({
    env: 'CHATCTX_REVIEWER',
    runtimes: LOCAL,
    default: '',
    defaultText: 'your login name',
    description: 'the reviewer name the CLI records with an approval when `--reviewer` is not given',
  }),
  dbClusterArn: text({ env: 'CHATCTX_DB_CLUSTER_ARN', runtimes: AWS, description: 'the Aurora cluster the Data API runs statements on' }),
  dbSecretArn: text({ env: 'CHATCTX_DB_SECRET_ARN', runtimes: AWS, description: "the secret of the function's own database role" }),
  dbName: text({ env: 'CHATCTX_DB_NAME', runtimes: AWS, description: 'the database name' }),
  pepperSecretArn: text({
    env: 'CHATCTX_PEPPER_SECRET_ARN',
    runtimes: AWS,
    description: 'the secret holding the pepper under the JSON key `pepper`: the tool role\'s secret, or an adopted one (gateway, search, admin, migrate)',
  }),
  pepperReplace: flag({
    env: 'CHATCTX_PEPPER_REPLACE',
    runtimes: AWS,
    default: false,
    description: 'whether the owner replaces the pepper on purpose (`chatctx:replacePepper`): migrate records a different pepper instead of refusing it, and every stored key and OAuth grant stops working (migrate)',
  }),
  pepperAdopted: flag({
    env: 'CHATCTX_PEPPER_ADOPTED',
    runtimes: AWS,
    default: false,
    description: 'whether the pepper secret is one the owner named (`chatctx:pepperSecretArn`) rather than the stack\'s own; migrate then accepts it for a database whose keys predate the pepper fingerprint (migrate)',
  }),
  keyCacheSeconds: integer({
    env: 'CHATCTX_KEY_CACHE_SECONDS',
    runtimes: AWS,
    min: 0,
    max: 3600,
    default: 60,
    description: 'seconds the gateway answers a known API key from memory before looking it up again; a revocation, quota or scope change takes effect within this time (`0` looks up every request)',
  }),
  stackName: text({
    env: 'CHATCTX_STACK_NAME',
    runtimes: AWS,
    default: '',
    defaultText: 'none (no `stack` dimension)',
    description: 'the stack the function belongs to: the `stack` dimension of its metrics, so two stacks in one region keep their alarms apart (every function)',
  }),
  sourceCheckTopicArn: text({
    env: 'CHATCTX_SOURCE_CHECK_TOPIC_ARN',
    runtimes: AWS,
    description: 'the SNS topic the scheduled source check reports drifted or broken sources to (source checks)',
  }),
  quotaTableName: text({ env: 'CHATCTX_QUOTA_TABLE_NAME', runtimes: AWS, description: 'the DynamoDB quota table (gateway)' }),
  searchKnowledgeFunction: text({
    env: 'CHATCTX_TOOL_FUNCTION_SEARCH_KNOWLEDGE',
    runtimes: AWS,
    description: 'the function version that runs `search_knowledge` (gateway; the stack sets the qualified ARN of the version its deploy published)',
  }),
  getGuidanceFunction: text({ env: 'CHATCTX_TOOL_FUNCTION_GET_GUIDANCE', runtimes: AWS, description: 'the function version that runs `get_guidance` (gateway; a qualified ARN on AWS)' }),
  submitFeedbackFunction: text({
    env: 'CHATCTX_TOOL_FUNCTION_SUBMIT_FEEDBACK',
    runtimes: AWS,
    description: 'the function version that runs `submit_feedback` (gateway; a qualified ARN on AWS)',
  }),
  roleSecretArns: stringMap({
    env: 'CHATCTX_ROLE_SECRET_ARNS',
    runtimes: AWS,
    description: 'database role name → the secret holding its password, as JSON (migrate)',
  }),
  lambdaTaskRoot: text({
    env: 'LAMBDA_TASK_ROOT',
    runtimes: AWS,
    default: '.',
    description: 'set by the Lambda runtime: where the bundle (and the migrations copied beside it) is unpacked',
  }),
} as const;

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<K extends SettingName> = (typeof SETTINGS)[K] extends Setting<infer T> ? T : never;

/**
 * The value of one setting from `env`: parsed when present and non-blank, else its
 * default; throws `ConfigError` naming the variable when the value is bad or a
 * required one is missing.
 */
export function readSetting<K extends SettingName>(env: Environment, name: K): SettingValue<K> {
  const spec = SETTINGS[name] as Setting<SettingValue<K>>;
  const raw = env[spec.env];
  if (raw === undefined || raw.trim() === '') {
    if (spec.defaultValue === undefined) throw new ConfigError(spec.env, `${spec.env} is required (${spec.description}).`);
    return spec.defaultValue;
  }
  try {
    return spec.parse(raw);
  } catch (error) {
    // Only a choice among fixed words quotes what it got; no other message repeats the value.
    throw new ConfigError(spec.env, `${spec.env} ${(error as Error).message}.`);
  }
}

/** Whether `env` gives the setting a value (rather than leaving it to its default). */
export function settingGiven(env: Environment, name: SettingName): boolean {
  const raw = env[SETTINGS[name].env];
  return raw !== undefined && raw.trim() !== '';
}

/** A setting's default value; throws for a required setting, which has none. */
export function settingDefault<K extends SettingName>(name: K): SettingValue<K> {
  const value = (SETTINGS[name] as Setting<SettingValue<K>>).defaultValue;
  if (value === undefined) throw new Error(`${SETTINGS[name].env} has no default.`);
  return value;
}

/** Several settings at once, as an object keyed by setting name. */
export function readSettings<const K extends SettingName>(env: Environment, names: readonly K[]): { readonly [N in K]: SettingValue<N> } {
  return Object.fromEntries(names.map((name) => [name, readSetting(env, name)])) as { [N in K]: SettingValue<N> };
}

/** The settings table of docs/configuration.md, one row per setting, in `SETTINGS` order. */
export function renderSettingsTable(): string {
  const rows = Object.values(SETTINGS as Record<string, Setting<unknown>>).map((spec) => {
    const where = spec.runtimes.length === 2 ? 'both' : spec.runtimes[0] === 'aws' ? 'AWS' : 'local';
    const fallback = spec.defaultText === undefined ? 'required' : spec.defaultText === 'none' ? 'none' : `\`${spec.defaultText}\``;
    return `| \`${spec.env}\` | ${where} | ${fallback} | ${spec.description} |`;
  });
  return ['| variable | runtime | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
