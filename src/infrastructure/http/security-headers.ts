import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { arrivedOverTls } from './arrived-over-tls';
import { API_POLICY, CspDirectives, SURFACE_POLICIES, SurfacePolicy } from './surface-policies';

type Middleware = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

/** HSTS for a year, for this host only: its parent domain's other hosts are not the service's to promise. */
export const HSTS_MAX_AGE_S = 365 * 24 * 60 * 60;

/**
 * Replies hold balances, orders, statements, staff data and tokens; no
 * shared cache may keep one, nor a browser's. The console's files are not
 * versioned by name (console.js is console.js in every release), so they
 * are not cached either: a stale script would speak to a newer API.
 */
export const CACHE_CONTROL = 'no-store';

/** Helmet's middlewares call next at once; what they set is all that matters here. */
const NEXT = () => undefined;

/**
 * Helmet configured header by header: each of its defaults is either wanted
 * here or turned off for a reason. Helmet builds every value once, here.
 */
function helmetFor(contentSecurityPolicy: CspDirectives, { page }: { page: boolean }): Middleware {
  return helmet({
    // Only the directives given: helmet's defaults would loosen a policy (style-src https:) or break plain-HTTP development (upgrade-insecure-requests).
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy },
    xContentTypeOptions: true,
    referrerPolicy: { policy: 'no-referrer' },
    // For browsers that ignore the policy's frame-ancestors, and for /docs, whose policy has none.
    xFrameOptions: { action: 'deny' },
    // No other site may load a reply as an image or a script and read it by a side channel.
    crossOriginResourcePolicy: { policy: 'same-origin' },
    // A page keeps no handle on a window another site opened, nor that site on it; a JSON reply is never a window.
    crossOriginOpenerPolicy: page ? { policy: 'same-origin' } : false,
    // Sent per request, only over TLS (SecurityHeaders.apply): over plain HTTP it would be a promise no one keeps.
    strictTransportSecurity: false,
    // Would make browsers refuse cross-origin resources the policies already forbid: nothing to add, and nothing embeds a JSON reply.
    crossOriginEmbedderPolicy: false,
    // A hint for documents that set document.domain, which no page here does; meaningless on JSON.
    originAgentCluster: false,
    // About prefetching DNS for a page's links: the pages link nowhere outside, and JSON has no links.
    xDnsPrefetchControl: false,
    // Internet Explorer 8's download prompt, and Flash's and Acrobat's cross-domain files: none of them reach this service.
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    // Turns off an XSS filter that no browser still ships.
    xXssProtection: false,
    // Express never sets X-Powered-By here (main.ts disables it): nothing to remove per request.
    xPoweredBy: false,
  });
}

/** Whether a path is one of a surface's: exact paths, with or without a trailing slash, and prefixes written 'prefix/*'. */
function pathMatcher({ paths }: SurfacePolicy): (path: string) => boolean {
  const exact = new Set(paths.filter((p) => !p.endsWith('/*')).flatMap((p) => [p, `${p}/`]));
  const prefixes = paths.filter((p) => p.endsWith('/*')).map((p) => p.slice(0, -1));
  return (path) => exact.has(path) || prefixes.some((prefix) => path.startsWith(prefix));
}

/**
 * The security headers of every reply, set once, before anything else runs
 * (the HTTP edge calls apply on each request): nosniff, no-referrer, no
 * framing, no caching (Cache-Control, which helmet leaves alone), the
 * Content-Security-Policy of the request's surface (surface-policies.ts), and
 * Strict-Transport-Security when the request arrived over TLS as TRUST_PROXY
 * judges it. A route, middleware or guard that answers later only adds its
 * own headers to these.
 */
export class SecurityHeaders {
  private readonly surfaces: { matches: (path: string) => boolean; headers: Middleware }[];
  private readonly api = helmetFor(API_POLICY, { page: false });
  private readonly hsts = helmet.strictTransportSecurity({ maxAge: HSTS_MAX_AGE_S, includeSubDomains: false });
  /**
   * The API's headers as raw header lines, for the refusals written straight
   * to the socket, of bytes that never became a request: no request, so no
   * surface to choose and no way to tell TLS, hence no HSTS.
   */
  readonly rawLines: string;

  constructor(
    private readonly trustProxy: number,
    surfaces: readonly SurfacePolicy[] = Object.values(SURFACE_POLICIES),
  ) {
    this.surfaces = surfaces.map((surface) => ({ matches: pathMatcher(surface), headers: helmetFor(surface.contentSecurityPolicy, { page: true }) }));
    this.rawLines = recorded(this.api)
      .concat([['Cache-Control', CACHE_CONTROL]])
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
  }

  apply(request: IncomingMessage, response: ServerResponse): void {
    this.surfaceOf(request.url ?? '')(request, response, NEXT);
    response.setHeader('Cache-Control', CACHE_CONTROL);
    if (arrivedOverTls(request, this.trustProxy)) this.hsts(request, response, NEXT);
  }

  private surfaceOf(url: string): Middleware {
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    for (const surface of this.surfaces) if (surface.matches(path)) return surface.headers;
    return this.api;
  }
}

/** The headers a helmet middleware sets, read once by handing it a reply that only records them. */
function recorded(middleware: Middleware): [string, string][] {
  const headers: [string, string][] = [];
  const recorder = { setHeader: (name: string, value: string) => headers.push([name, value]), removeHeader: () => undefined };
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, NEXT);
  return headers;
}
