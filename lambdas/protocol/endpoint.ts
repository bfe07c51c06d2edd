/**
 * The front door of both runtimes: one fetch-style function that every HTTP request
 * goes through, on the local Node server and behind API Gateway alike. The runtimes
 * keep only their adapters (socket or proxy event → `Request`, the caller's address,
 * the public base URL).
 *
 *   Host (403, every path) → documentation file → Origin (403, `/mcp` only)
 *   → `/mcp` (`mcp-http-handler.ts`) | OAuth (`oauth/oauth-routes.ts`) | 404
 *
 * Host comes first on every path, so a page on another name (DNS rebinding) learns
 * nothing, not even which paths exist. Origin is checked for `/mcp` only: the OAuth
 * endpoints are read by browser-based connectors from any origin, and hold no
 * cookie a foreign page could ride on except the consent form's, which has its own
 * CSRF check.
 *
 * One catch covers every route: a store still resuming (an error carrying a retry
 * hint) is answered 503 with `Retry-After` and logged as a warning; anything else a
 * logged 500 that says nothing of its cause. Each route family shapes that answer
 * the way its clients read errors (JSON-RPC, OAuth JSON, an HTML page, plain text).
 * Every request to `/mcp` or an OAuth path is logged with its status and duration.
 */
import type { Logger } from '../ports/logger.ts';
import { errorKind } from '../observability/logger.ts';
import { retryAfterOf } from '../errors/app-error.ts';
import type { OAuthRoutes } from '../oauth/oauth-routes.ts';
import { checkOrigin, type OriginPolicy } from './request-guards.ts';
import { HTTP } from './http-responses.ts';
import type { McpHttpHandler } from './mcp-http-handler.ts';

export interface EndpointContext {
  /** The connection's source address as the socket or API Gateway reports it. */
  readonly clientIp: string;
  /** The public URL the paths hang from: the server's origin, or the API stage's URL. */
  readonly baseUrl: string;
}

export type Endpoint = (request: Request, context: EndpointContext) => Promise<Response>;

/** What answers once the store is open. */
export interface EndpointRoutes {
  readonly mcp: McpHttpHandler;
  readonly oauth?: OAuthRoutes;
}

export interface EndpointDeps {
  /** Host and Origin allow-lists. */
  readonly guard: OriginPolicy;
  /** A documentation file for GET/HEAD of its path, else undefined; it never waits for `routes`. */
  readonly site?: (request: Request, context: EndpointContext) => Response | undefined;
  /** `/mcp` and the OAuth endpoints; a local server passes a promise that settles when its store is open. */
  readonly routes?: EndpointRoutes | Promise<EndpointRoutes>;
  readonly logger: Logger;
  /** @default '/mcp' */
  readonly mcpPath?: string;
}

type Route = 'mcp' | 'oauth' | 'site' | 'none';

export function createEndpoint(deps: EndpointDeps): Endpoint {
  const mcpPath = deps.mcpPath ?? '/mcp';
  const hostsOnly: OriginPolicy = { allowedHosts: deps.guard.allowedHosts, allowedOrigins: ['*'] };

  return async (request, context) => {
    const started = performance.now();
    const path = new URL(request.url).pathname;
    const seen: { route: Route; routes?: EndpointRoutes } = { route: path === mcpPath ? 'mcp' : 'none' };
    let response: Response;
    try {
      response = await answer(request, context, path, seen);
    } catch (error) {
      logFailure(deps.logger, seen.route, path, error);
      response = failure(seen.route, path, error, seen.routes);
    }
    if (seen.route === 'mcp') {
      // Stateless: no session is ever issued, whatever the SDK's transport added.
      response.headers.delete('mcp-session-id');
      deps.logger.info('http_request', { method: request.method, status: response.status, duration_ms: elapsed(started) });
    } else if (seen.route === 'oauth') {
      deps.logger.info('oauth_request', { path, method: request.method, status: response.status, duration_ms: elapsed(started) });
    }
    return response;
  };

  /** Routes the request; `seen` records how far it got, for the catch. */
  async function answer(request: Request, context: EndpointContext, path: string, seen: { route: Route; routes?: EndpointRoutes }): Promise<Response> {
    const refusedHost = checkOrigin(request, hostsOnly);
    if (refusedHost) return HTTP.forbidden(refusedHost);
    if (seen.route !== 'mcp' && deps.site) {
      seen.route = 'site';
      const file = deps.site(request, context);
      if (file) return file;
      seen.route = 'none';
    }
    // Only now wait for the store: a documentation file never does.
    const routes = (seen.routes = deps.routes === undefined ? undefined : await deps.routes);
    if (seen.route === 'mcp' && routes) {
      const refused = checkOrigin(request, deps.guard);
      if (refused) return HTTP.forbidden(refused);
      return routes.mcp(request, context);
    }
    if (routes?.oauth?.owns(path)) {
      seen.route = 'oauth';
      return routes.oauth.answer(request, context.baseUrl, context.clientIp);
    }
    return HTTP.notFound();
  }
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

/** A store still resuming is a wait, not a fault: a warning, so the failure alarm counts only faults. */
function logFailure(logger: Logger, route: Route, path: string, error: unknown): void {
  // The OAuth paths are a fixed set; any other path may be whatever a caller typed, so it stays out of the log.
  const fields = { route, path: route === 'oauth' ? path : undefined, error: errorKind(error) };
  if (retryAfterOf(error) === undefined) logger.error('request_failed', fields);
  else logger.warn('request_failed', fields);
}

/**
 * A failed request's answer, shaped the way its route's clients read errors: 503
 * with `Retry-After` when something was not ready yet (a resuming database), else
 * 500, neither saying more than that.
 */
function failure(route: Route, path: string, error: unknown, routes: EndpointRoutes | undefined): Response {
  const retryAfter = retryAfterOf(error);
  if (route === 'oauth' && routes?.oauth) return routes.oauth.failure(path, retryAfter);
  if (route === 'site' && retryAfter === undefined) return HTTP.plainInternal();
  return retryAfter === undefined ? HTTP.internal() : HTTP.unavailable(retryAfter, (error as Error).message);
}
