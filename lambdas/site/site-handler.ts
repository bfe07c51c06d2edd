/**
 * Serves the public documentation files with GET/HEAD; anything else is left to
 * the MCP handler (which answers 404 off its path).
 */
import { renderPublicDocs, type DocsSettings } from './public-docs.ts';

export type SiteHandler = (request: Request) => Response | undefined;

export function createSiteHandler(settings: DocsSettings): SiteHandler {
  const files = renderPublicDocs(settings);
  return (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const file = files.get(new URL(request.url).pathname);
    if (!file) return undefined;
    return new Response(request.method === 'HEAD' ? null : file.body, {
      status: 200,
      headers: { 'Content-Type': file.contentType, 'Cache-Control': 'public, max-age=300' },
    });
  };
}
