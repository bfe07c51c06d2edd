/**
 * `npm run smoke -- --url URL [--key KEY] [--json]`
 *
 * Checks a running chatctx endpoint end to end, deployed or local, as clients
 * meet it: the official SDK clients of both protocol eras (v1 with `initialize`,
 * v2 pinned to 2026-07-28), `tools/list`, a search, a `get_guidance` of what the
 * search returned, a feedback call whose comment says it came from this check,
 * the guest quota headers, a 401 for a made-up key, the OAuth metadata, the
 * sitemap and robots files, and a GET on the MCP URL (answered without a database
 * on AWS). Prints a table of each check with its latency; exits 1 when any failed.
 */
import { Command } from 'commander';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const opts = new Command('smoke')
  .requiredOption('--url <url>', 'the MCP endpoint, e.g. https://mcp.example.com/mcp or http://127.0.0.1:8787/mcp')
  .option('--key <key>', 'an API key to call with (default: as a guest)')
  .option('--json', 'print the results as JSON')
  .parse()
  .opts<{ url: string; key?: string; json?: boolean }>();

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly detail: string;
}

const checks: Check[] = [];
const mcpUrl = new URL(opts.url);
const base = mcpUrl.href.replace(/\/mcp\/?$/, '');
const auth = opts.key ? { Authorization: `Bearer ${opts.key}` } : undefined;

async function check(name: string, run: () => Promise<string>): Promise<void> {
  const started = performance.now();
  try {
    const detail = await run();
    checks.push({ name, ok: true, ms: performance.now() - started, detail });
  } catch (error) {
    checks.push({ name, ok: false, ms: performance.now() - started, detail: error instanceof Error ? error.message : String(error) });
  }
}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown> };

const v1 = new V1Client({ name: 'chatctx-smoke', version: '1.0.0' });
let firstSlug: string | undefined;
await check('v1 client connects (initialize)', async () => {
  await v1.connect(new V1Transport(mcpUrl, { requestInit: auth ? { headers: auth } : undefined }));
  return `server ${v1.getServerVersion()?.name ?? '?'}`;
});
await check('tools/list', async () => {
  const names = (await v1.listTools()).tools.map((t) => t.name).sort();
  expect(names.join() === 'get_guidance,search_knowledge,submit_feedback', `tools: ${names.join(', ')}`);
  return names.join(', ');
});
await check('search_knowledge', async () => {
  const result = (await v1.callTool({ name: 'search_knowledge', arguments: { query: 'retry failed HTTP calls with backoff', max_results: 3 } })) as ToolResult;
  expect(!result.isError, 'the search answered with an error');
  const content = result.structuredContent as { results: { slug: string }[]; retrieval: { mode: string } };
  firstSlug = content.results[0]?.slug;
  return `${content.retrieval.mode}, ${content.results.length} result(s)`;
});
await check('get_guidance', async () => {
  expect(firstSlug, 'the search returned nothing to ask for');
  const result = (await v1.callTool({ name: 'get_guidance', arguments: { ids: [firstSlug] } })) as ToolResult;
  const content = result.structuredContent as { results: unknown[]; missing: string[] };
  expect(!result.isError && content.results.length === 1, `missing: ${content.missing?.join(', ')}`);
  return firstSlug!;
});
await check('submit_feedback', async () => {
  const result = (await v1.callTool({ name: 'submit_feedback', arguments: { category: 'other', source: 'other', comment: 'chatctx smoke test: please ignore' } })) as ToolResult;
  expect(!result.isError && (result.structuredContent as { accepted?: boolean }).accepted === true, 'feedback was not accepted');
  return 'accepted';
});
await v1.close().catch(() => undefined);

await check('v2 client, pinned to 2026-07-28', async () => {
  const client = new Client({ name: 'chatctx-smoke', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: auth ? { headers: auth } : undefined }));
  const tools = (await client.listTools()).tools.length;
  await client.close();
  return `${tools} tools`;
});

const post = (headers: Record<string, string> = {}) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
if (!opts.key) {
  await check('guest quota headers', async () => {
    const response = await post();
    const limit = response.headers.get('x-guest-quota-limit');
    expect(limit !== null, 'no X-Guest-Quota-Limit header');
    return `limit ${limit}, remaining ${response.headers.get('x-guest-quota-remaining')}`;
  });
}
await check('a made-up key gets 401', async () => {
  const response = await post({ Authorization: `Bearer kb_live_${'x'.repeat(43)}` });
  expect(response.status === 401, `status ${response.status}`);
  return 'WWW-Authenticate ' + (response.headers.get('www-authenticate') ?? 'missing');
});
await check('OAuth metadata', async () => {
  const resource = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
  const server = await fetch(`${base}/.well-known/oauth-authorization-server`);
  expect(resource.ok && server.ok, `status ${resource.status} / ${server.status}`);
  return `issuer ${((await server.json()) as { issuer: string }).issuer}`;
});
for (const file of ['sitemap.xml', 'robots.txt']) {
  await check(file, async () => {
    const response = await fetch(`${base}/${file}`);
    expect(response.ok, `status ${response.status}`);
    return `${(await response.text()).length} bytes`;
  });
}
await check('GET on the MCP URL', async () => {
  const controller = new AbortController();
  const response = await fetch(mcpUrl, { headers: { Accept: 'text/event-stream', ...(auth ?? {}) }, signal: controller.signal });
  expect(response.status === 200 || response.status === 405, `status ${response.status}`);
  controller.abort();
  return `status ${response.status}`;
});

if (opts.json) {
  console.log(JSON.stringify({ url: mcpUrl.href, checks }, null, 2));
} else {
  console.log(`| check | result | ms | detail |\n|---|---|---|---|`);
  for (const c of checks) console.log(`| ${c.name} | ${c.ok ? 'ok' : 'FAILED'} | ${Math.round(c.ms)} | ${c.detail.replace(/\|/g, '\\|')} |`);
}
process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
