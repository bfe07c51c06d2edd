/**
 * The site Lambda entry (`lambdas/handlers/site.ts`) as API Gateway calls it: every
 * path the stack routes to it answers, and the crawl files (`/sitemap.xml`,
 * `/robots.txt`) name absolute URLs on the host and stage the request came through.
 */
import { describe, expect, it } from 'vitest';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createSiteHandler, handler } from '../../lambdas/handlers/site.ts';
import { PUBLIC_DOC_PATHS } from '../../lib/mcp-api.ts';
import { GATEWAY_HOST, toProxyEvent } from '../support/api-gateway-fetch.ts';

const STAGE_BASE = `https://${GATEWAY_HOST}/v1`;
const CONTEXT = { functionName: 'site', awsRequestId: 'req', getRemainingTimeInMillis: () => 5_000 } as unknown as Context;
const CUSTOM_DOMAIN = 'docs.example.org';

async function get(path: string, options: { method?: string; host?: string } = {}) {
  const event: APIGatewayProxyEvent = await toProxyEvent(new Request(`https://${GATEWAY_HOST}${path}`, { method: options.method ?? 'GET' }), '198.51.100.7');
  if (options.host) event.headers.Host = options.host;
  const result = await handler(event, CONTEXT);
  return { status: result.statusCode, type: result.multiValueHeaders?.['content-type']?.[0], body: result.body };
}

const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!);

describe('site Lambda', () => {
  it('answers 200 for every documentation path the stack routes to it', async () => {
    for (const path of PUBLIC_DOC_PATHS) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.body.length, path).toBeGreaterThan(20);
    }
    expect((await get('/nope')).status).toBe(404);
  });

  it('serves a sitemap of the documentation pages as absolute URLs on the stage', async () => {
    const res = await get('/sitemap.xml');
    expect(res.type).toBe('application/xml; charset=utf-8');
    expect(res.body.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')).toBe(true);
    expect(res.body.trimEnd().endsWith('</urlset>')).toBe(true);
    expect(locs(res.body)).toEqual(
      ['/llms.txt', '/llms-full.txt', '/docs.md', '/api.json', '/agent-instructions.md', '/mcp.json'].map((p) => STAGE_BASE + p),
    );
    // Each listed page is really there.
    for (const loc of locs(res.body)) expect((await get(new URL(loc).pathname.replace(/^\/v1/, ''))).status, loc).toBe(200);
  });

  it('serves robots.txt that keeps crawlers off the endpoint and points at the sitemap', async () => {
    const res = await get('/robots.txt');
    expect(res.type).toBe('text/plain; charset=utf-8');
    expect(res.body.split('\n')).toEqual(['User-agent: *', 'Allow: /', 'Disallow: /v1/mcp', `Sitemap: ${STAGE_BASE}/sitemap.xml`, '']);
  });

  it('names the custom domain, without a stage, when the request came through one', async () => {
    const sitemap = await get('/sitemap.xml', { host: CUSTOM_DOMAIN });
    expect(locs(sitemap.body)[0]).toBe(`https://${CUSTOM_DOMAIN}/llms.txt`);
    expect((await get('/robots.txt', { host: CUSTOM_DOMAIN })).body).toContain('Disallow: /mcp\n');
    // The stage's own files are unchanged by the other host's request.
    expect(locs((await get('/sitemap.xml')).body)[0]).toBe(`${STAGE_BASE}/llms.txt`);
  });

  it('links the index to files on the stage, not on the bare host', async () => {
    const llms = (await get('/llms.txt')).body;
    expect(llms).toContain(`(${STAGE_BASE}/llms-full.txt)`);
    expect(llms).not.toMatch(new RegExp(`https://${GATEWAY_HOST}/(?!v1/)`));
  });

  it('gives each client a setup that names this stage\'s endpoint, and VS Code\'s is /mcp.json itself', async () => {
    const mcpUrl = `${STAGE_BASE}/mcp`;
    const docs = (await get('/docs.md')).body;
    const llmsFull = (await get('/llms-full.txt')).body;
    expect(llmsFull).toBe(docs);
    const blocks = [...docs.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
    const json = blocks.filter((b) => b.lang === 'json' && b.text.includes(mcpUrl)).map((b) => JSON.parse(b.text));
    const vscode = json.find((config) => config.servers);
    expect(vscode).toEqual(JSON.parse((await get('/mcp.json')).body));
    expect(json.find((config) => config.mcpServers)?.mcpServers.chatctx).toEqual({ url: mcpUrl, headers: { Authorization: 'Bearer ${env:CHATCTX_API_KEY}' } });
    expect(blocks.find((b) => b.lang === 'sh')?.text).toContain(`claude mcp add --transport http chatctx ${mcpUrl} --header "Authorization: Bearer kb_live_…"`);
    expect(blocks.find((b) => b.lang === 'toml')?.text).toBe(`[mcp_servers.chatctx]\nurl = "${mcpUrl}"\nbearer_token_env_var = "CHATCTX_API_KEY"\n`);
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/oauth/register', '/oauth/authorize', '/oauth/token']) {
      expect(docs, path).toContain(`\`${path}\``);
    }
    expect(docs).not.toMatch(/Claude Desktop use[s]? `mcpServers`/);
  });

  it('answers HEAD with the content type and no body', async () => {
    const res = await get('/sitemap.xml', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/xml; charset=utf-8');
    expect(res.body).toBe('');
  });

  it('answers a fault of its own with a logged 500 that shows no detail, not a Lambda error', async () => {
    const logged: string[] = [];
    const record = (event: string, fields?: Record<string, unknown>) => void logged.push(`${event} ${JSON.stringify(fields ?? {})}`);
    const broken = createSiteHandler({ info: record, warn: record, error: record }, { CHATCTX_GUEST_DAILY_LIMIT: 'many' });
    const event = await toProxyEvent(new Request(`https://${GATEWAY_HOST}/llms.txt`), '198.51.100.7');
    const res = await broken(event);
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('Internal Server Error\n');
    expect(logged).toEqual(['request_failed {"route":"site","error":"ConfigError"}']);
    expect((await get('/llms.txt')).status).toBe(200);
  });
});
