/**
 * Serves the public documentation files with GET/HEAD. The files name the MCP URL
 * they describe, so they are rendered once per URL and kept for the life of the
 * process (a Lambda serves one stage; a local server one address).
 */
import { renderPublicDocs, type DocFile, type DocsSettings } from './public-docs.ts';

export type SiteHandler = (request: Request) => Response | undefined;

/** A documentation file for GET/HEAD of its path; undefined for anything else (the MCP handler's turn). */
export function createSiteHandler(settings: DocsSettings): SiteHandler {
  const files = renderPublicDocs(settings);
  return (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const file = files.get(new URL(request.url).pathname);
    return file ? fileResponse(file, request.method) : undefined;
  };
}

const rendered = new Map<string, SiteHandler>();
/** A stage is reached through a handful of hosts (its execute-api host, custom domains); more means odd Host headers. */
const MAX_RENDERED = 8;

/** The documentation file for the request under `settings`, kept per MCP URL; undefined for any other path. */
export function serveSite(request: Request, settings: DocsSettings): Response | undefined {
  const key = `${settings.mcpUrl}\u0000${settings.guestDailyLimit}`;
  let site = rendered.get(key);
  if (!site) {
    if (rendered.size >= MAX_RENDERED) rendered.clear();
    rendered.set(key, (site = createSiteHandler(settings)));
  }
  return site(request);
}

function fileResponse(file: DocFile, method: string): Response {
  return new Response(method === 'HEAD' ? null : file.body, {
    status: 200,
    headers: { 'Content-Type': file.contentType, 'Cache-Control': 'public, max-age=300' },
  });
}
