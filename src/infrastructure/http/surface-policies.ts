/** A Content-Security-Policy as helmet takes it: each directive and its sources. */
export type CspDirectives = Readonly<Record<string, readonly string[]>>;

export interface SurfacePolicy {
  /**
   * The paths it covers: '/docs' is that path alone (with or without a
   * trailing slash), '/console/*' every path under /console/.
   */
  readonly paths: readonly string[];
  readonly contentSecurityPolicy: CspDirectives;
}

/**
 * Every JSON reply, and anything no surface below claims: nothing in it may
 * load or run, and no page may frame it. The strictest policy is the
 * default, so that a path missing from the table loses nothing.
 */
export const API_POLICY: CspDirectives = {
  'default-src': ["'none'"],
  'frame-ancestors': ["'none'"],
};

/**
 * The pages a browser opens, each with the policy its page needs, in this one
 * place: a page that changes what it loads changes its entry here, and the
 * tests in test/http/security-headers.test.ts say what each page's policy is.
 * Each of these surfaces also gets Cross-Origin-Opener-Policy (security-headers.ts).
 */
export const SURFACE_POLICIES: Readonly<Record<'console' | 'docs', SurfacePolicy>> = {
  /**
   * Nothing but this origin: no inline script or style, no framing, forms and
   * fetches back to the service only. The console loads one script and one
   * stylesheet from /console/assets and builds every page with DOM calls.
   * The icon browsers ask every origin for is the console's.
   */
  console: {
    paths: ['/console', '/console/*', '/favicon.ico'],
    contentSecurityPolicy: {
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'"],
      'connect-src': ["'self'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
      'base-uri': ["'none'"],
    },
  },
  /**
   * The interactive reference at /docs (Swagger UI): the console's policy but
   * for `img-src data:`, for the icons Swagger UI's stylesheet draws as data:
   * URLs. No script runs but the files served from /docs/assets, no inline
   * style or script, and nothing is fetched from anywhere but this service.
   * The JSON documents beside it are API replies.
   */
  docs: {
    paths: ['/docs', '/docs/assets/*'],
    contentSecurityPolicy: {
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
      'base-uri': ["'none'"],
    },
  },
};
