/**
 * The public documentation files (`/llms.txt`, `/llms-full.txt`, `/docs.md`,
 * `/api.json`, `/agent-instructions.md`, `/mcp.json`, `/sitemap.xml`, `/robots.txt`).
 * Every URL in them is absolute and built from the MCP URL they are rendered for,
 * so on API Gateway they name the stage the request came through.
 *
 * Prose lives in the Markdown files beside this module; every table of arguments,
 * limits and error codes is generated from `schema/tools.ts`, so documentation and
 * validation cannot drift. This module only renders; serving is `site-handler.ts`.
 */
import { readFileSync } from 'node:fs';
import {
  TOOL_ERROR_CODES,
  LIMITS,
  TOOL_DEFINITIONS,
  inputJsonSchema,
  toolErrorOutput,
  type ToolDefinition,
} from '../../schema/tools.ts';
import { SERVER_INSTRUCTIONS, SERVER_NAME, listTools } from '../protocol/mcp-server.ts';

export interface DocsSettings {
  /** Absolute URL of the MCP endpoint, e.g. http://127.0.0.1:8787/mcp. */
  readonly mcpUrl: string;
  /** Guest tool calls per IP per UTC day; 0 when guests are off. */
  readonly guestDailyLimit: number;
}

export interface DocFile {
  readonly contentType: string;
  readonly body: string;
}

const read = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');

const ERROR_CODE_LIST = TOOL_ERROR_CODES.map((c) => `\`${c}\``).join(', ');

const LIMIT_ROWS: [string, string][] = [
  ['query length', `${LIMITS.queryMinChars}–${LIMITS.queryMaxChars} characters`],
  ['technologies', `${LIMITS.technologiesMaxItems} items, ${LIMITS.technologyMaxChars} characters each`],
  ['versions', `${LIMITS.versionsMaxKeys} keys, values up to ${LIMITS.versionValueMaxChars} characters`],
  ['topics', `${LIMITS.topicsMaxItems} per call`],
  ['max_results', `${LIMITS.maxResultsMin}–${LIMITS.maxResultsMax} (default ${LIMITS.maxResultsDefault})`],
  ['token_budget', `${LIMITS.tokenBudgetMin}–${LIMITS.tokenBudgetMax} (default ${LIMITS.tokenBudgetDefault})`],
  ['get_guidance ids', `${LIMITS.guidanceIdsMin}–${LIMITS.guidanceIdsMax} per call, ${LIMITS.identifierMaxChars} characters each`],
  ['feedback comment', `${LIMITS.feedbackCommentMaxChars} characters`],
  ['request body', `${LIMITS.requestBodyMaxBytes} bytes`],
];

type JsonSchema = Record<string, any>;

function describeType(schema: JsonSchema): string {
  if (schema.anyOf) return (schema.anyOf as JsonSchema[]).map(describeType).join(' or ');
  if (schema.type === 'array') return `array of ${describeType(schema.items ?? {})}`;
  if (schema.type === 'object') return 'object of strings';
  return String(schema.type ?? 'any');
}

function describeRule(schema: JsonSchema, required: boolean): string {
  const rules: string[] = [required ? 'required' : 'optional'];
  const bound = (lo: unknown, hi: unknown, unit: string) => {
    if (lo !== undefined && hi !== undefined) rules.push(`${lo}–${hi} ${unit}`);
    else if (hi !== undefined) rules.push(`at most ${hi} ${unit}`);
    else if (lo !== undefined) rules.push(`at least ${lo} ${unit}`);
  };
  bound(schema.minLength, schema.maxLength, 'characters');
  bound(schema.minItems, schema.maxItems, 'items');
  bound(schema.minimum, schema.maximum, '');
  if (schema.maxProperties !== undefined) rules.push(`at most ${schema.maxProperties} keys`);
  if (schema.items?.maxLength !== undefined) rules.push(`each ${schema.items.minLength ?? 0}–${schema.items.maxLength} characters`);
  const values = schema.enum ?? schema.items?.enum ?? schema.anyOf?.[0]?.enum;
  if (values) rules.push(`one of ${(values as string[]).join(', ')}`);
  if (schema.anyOf?.[1]?.maxItems !== undefined) rules.push(`or a list of up to ${schema.anyOf[1].maxItems}`);
  if (schema.default !== undefined) rules.push(`default ${JSON.stringify(schema.default)}`);
  return rules.join('; ').replace(/ {2,}/g, ' ').replace(/ ;/g, ';');
}

function argumentRows(tool: ToolDefinition): string {
  const schema = inputJsonSchema(tool) as JsonSchema;
  const required = new Set<string>(schema.required ?? []);
  return Object.entries(schema.properties as Record<string, JsonSchema>)
    .map(([name, prop]) => `| \`${name}\` | ${describeType(prop)} | ${describeRule(prop, required.has(name))} |`)
    .join('\n');
}

function tool(name: ToolDefinition['name']): ToolDefinition {
  return TOOL_DEFINITIONS.find((t) => t.name === name)!;
}

export function clientConfig(mcpUrl: string): Record<string, unknown> {
  return {
    servers: {
      chatctx: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer ${input:chatctx-key}' } },
    },
    inputs: [{ type: 'promptString', id: 'chatctx-key', description: 'chatctx API key (kb_live_…)', password: true }],
  };
}

export function apiDocument(settings: DocsSettings): Record<string, unknown> {
  return {
    name: SERVER_NAME,
    endpoint: settings.mcpUrl,
    transport: { type: 'streamable-http', stateless: true, sessions: false, response_framing: 'text/event-stream' },
    auth: {
      scheme: 'Bearer',
      key_format: 'kb_live_ followed by 43+ URL-safe base64 characters',
      guest: settings.guestDailyLimit > 0 ? { tool_calls_per_ip_per_utc_day: settings.guestDailyLimit } : null,
      quota_headers: ['X-Guest-Quota-Limit', 'X-Guest-Quota-Remaining'],
      // What a caller sees depends on its credentials; the tools and their shapes do not.
      visibility: {
        guest: { collections: ['public'], submit_feedback: true },
        api_key: 'the collections the owner scoped the key to (public only by default), and submit_feedback unless the owner removed the feedback scope',
        oauth: "the scope of the API key the connector was approved with, as it is now",
        outside_scope: 'a record outside the caller\'s collections is unknown: get_guidance lists it in missing, submit_feedback refuses it, and it never shapes results, total_candidates or suggestions',
      },
    },
    instructions: SERVER_INSTRUCTIONS,
    // Exactly what tools/list advertises.
    tools: listTools(),
    limits: LIMITS,
    errors: {
      http: { 400: 'parse error or invalid request', 401: 'bad or revoked key', 403: 'host or origin not allowed', 405: 'method not allowed', 406: 'missing SSE Accept', 413: 'body too large', 415: 'not JSON', 429: 'quota spent; Retry-After', 503: 'database waking from a pause; nothing done; Retry-After' },
      tool_error_codes: TOOL_ERROR_CODES,
    },
  };
}

/** Every public file, keyed by path. */
export function renderPublicDocs(settings: DocsSettings): Map<string, DocFile> {
  const mcpJson = JSON.stringify(clientConfig(settings.mcpUrl), null, 2);
  const reference = read('docs.md')
    .replaceAll('{{MCP_URL}}', settings.mcpUrl)
    .replaceAll('{{MCP_JSON}}', mcpJson)
    .replaceAll('{{GUEST_LIMIT}}', String(settings.guestDailyLimit))
    .replaceAll('{{SEARCH_ARGS}}', argumentRows(tool('search_knowledge')))
    .replaceAll('{{GUIDANCE_ARGS}}', argumentRows(tool('get_guidance')))
    .replaceAll('{{FEEDBACK_ARGS}}', argumentRows(tool('submit_feedback')))
    .replaceAll('{{BODY_LIMIT}}', String(LIMITS.requestBodyMaxBytes))
    .replaceAll('{{ERROR_CODES}}', ERROR_CODE_LIST)
    .replaceAll('{{LIMITS}}', LIMIT_ROWS.map(([k, v]) => `| ${k} | ${v} |`).join('\n'));
  const base = siteBase(settings.mcpUrl);
  const index = [
    '# chatctx',
    '',
    '> Owner-reviewed engineering guidance for coding agents over MCP. Explicit no-match; no generative model answers.',
    '',
    `MCP endpoint: ${settings.mcpUrl} (Streamable HTTP, stateless; tools: ${TOOL_DEFINITIONS.map((t) => t.name).join(', ')})`,
    '',
    `- [Full reference](${base}/llms-full.txt): transport, auth, client setup, tools, modes, errors, limits, privacy`,
    `- [Reference (Markdown)](${base}/docs.md)`,
    `- [API schemas](${base}/api.json): JSON Schemas, limits, error codes`,
    `- [Agent policy](${base}/agent-instructions.md): when and how to call the tools`,
    `- [Client configuration](${base}/mcp.json)`,
    '',
  ].join('\n');
  return new Map<string, DocFile>([
    ['/llms.txt', { contentType: 'text/plain; charset=utf-8', body: index }],
    ['/llms-full.txt', { contentType: 'text/plain; charset=utf-8', body: reference }],
    ['/docs.md', { contentType: 'text/markdown; charset=utf-8', body: reference }],
    ['/api.json', { contentType: 'application/json', body: JSON.stringify(apiDocument(settings), null, 2) + '\n' }],
    ['/agent-instructions.md', { contentType: 'text/markdown; charset=utf-8', body: read('agent-instructions.md') }],
    ['/mcp.json', { contentType: 'application/json', body: mcpJson + '\n' }],
    ['/sitemap.xml', { contentType: 'application/xml; charset=utf-8', body: sitemap(base) }],
    ['/robots.txt', { contentType: 'text/plain; charset=utf-8', body: robots(settings.mcpUrl, base) }],
  ]);
}

/** The pages a crawler should index: the documentation files, not the endpoint or the crawl files. */
export const CANONICAL_PAGES = ['/llms.txt', '/llms-full.txt', '/docs.md', '/api.json', '/agent-instructions.md', '/mcp.json'] as const;

/** Everything before `/mcp`: the origin, plus the stage on a default execute-api host. */
function siteBase(mcpUrl: string): string {
  return mcpUrl.replace(/\/mcp$/, '');
}

const xmlText = (value: string) =>
  value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');

function sitemap(base: string): string {
  const urls = CANONICAL_PAGES.map((path) => `  <url><loc>${xmlText(base + path)}</loc></url>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...urls,
    '</urlset>',
    '',
  ].join('\n');
}

/** Crawl the documentation, not the MCP endpoint (a POST-only JSON-RPC API). */
function robots(mcpUrl: string, base: string): string {
  return ['User-agent: *', 'Allow: /', `Disallow: ${new URL(mcpUrl).pathname}`, `Sitemap: ${base}/sitemap.xml`, ''].join('\n');
}
