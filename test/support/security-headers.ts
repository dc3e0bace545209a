/**
 * What the security headers must be on every reply of the service, written
 * out here rather than read from the service's table, so that a change to
 * a policy shows up as a failing test.
 */

/** The console's policy as it was set by hand before the headers moved to the HTTP edge. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The /docs page's (Swagger UI): the console's, and data: images for the icons its stylesheet draws. */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** Every JSON reply's, and the default for any path no page claims. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** A policy as a map of directive to its sorted sources: the same policy whatever its spacing or order. */
export function parseCsp(policy: string | null | undefined): Record<string, string[]> {
  if (!policy) return {};
  return Object.fromEntries(
    policy
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]): [string, string[]] => [name.toLowerCase(), sources.sort()])
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/** The policy a path must be served with. */
export function expectedCsp(path: string): string {
  const bare = path.split('?')[0];
  if (bare === '/console' || bare.startsWith('/console/') || bare === '/favicon.ico') return CONSOLE_CSP;
  if (bare === '/docs' || bare === '/docs/' || bare.startsWith('/docs/assets/')) return DOCS_CSP;
  return API_CSP;
}

type HeaderSource = Headers | Record<string, string>;

const read = (headers: HeaderSource, name: string): string | undefined =>
  (headers instanceof Headers ? headers.get(name) : headers[name.toLowerCase()]) ?? undefined;

/**
 * Everything wrong with one reply's security headers, as sentences (none
 * when right): the headers every reply carries, its surface's policy, the
 * opener policy on pages only, HSTS exactly when expected, and none of the
 * headers turned off on purpose.
 */
export function securityHeaderProblems(where: string, path: string, headers: HeaderSource, { hsts }: { hsts: boolean }): string[] {
  const problems: string[] = [];
  const want = (name: string, value: string | undefined) => {
    const got = read(headers, name);
    if (got !== value) problems.push(`${where}: ${name} is ${JSON.stringify(got)}, not ${JSON.stringify(value)}`);
  };
  want('x-content-type-options', 'nosniff');
  want('cache-control', 'no-store');
  want('referrer-policy', 'no-referrer');
  want('x-frame-options', 'DENY');
  want('cross-origin-resource-policy', 'same-origin');
  const policy = expectedCsp(path);
  want('cross-origin-opener-policy', policy === API_CSP ? undefined : 'same-origin');
  const csp = read(headers, 'content-security-policy');
  if (JSON.stringify(parseCsp(csp)) !== JSON.stringify(parseCsp(policy))) {
    problems.push(`${where}: content-security-policy is ${JSON.stringify(csp)}, not ${JSON.stringify(policy)}`);
  }
  want('strict-transport-security', hsts ? 'max-age=31536000' : undefined);
  for (const name of ['x-powered-by', 'cross-origin-embedder-policy', 'origin-agent-cluster', 'x-dns-prefetch-control', 'x-xss-protection']) {
    want(name, undefined);
  }
  return problems;
}
