import { TEST_ENV, RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { rawExchange } from '../support/raw-http';
import { freePort } from '../support/child-service';
import { concretePath, registeredRoutes } from '../support/registered-routes';
import { API_CSP, CONSOLE_CSP, DOCS_CSP, parseCsp, securityHeaderProblems } from '../support/security-headers';

const HEADERS_TIMEOUT_MS = 1000;

interface Probe {
  method: string;
  path: string;
  status: number;
  headers: Headers;
}

/**
 * The security headers on every reply of the service, whatever the surface
 * and whatever the status: every route Nest registered (read from the
 * router, so that a route added later is probed too), the replies the HTTP
 * edge writes itself, and HSTS exactly when TLS ended in front of a proxy
 * that TRUST_PROXY counts.
 */
describe('security headers', () => {
  let db: TestDatabase;
  let service: RunningService;
  /** The same database behind one trusted proxy hop, its metrics on a port of their own. */
  let proxied: RunningService;
  let metricsPort: number;
  /** Signs the merchant API's requests. */
  let signer: TestMerchant;
  /** The merchant the back office's routes name: a probe may change it, never the signer. */
  let subject: TestMerchant;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db, { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) });
    metricsPort = await freePort();
    proxied = await startService(db, { TRUST_PROXY: '1', METRICS_PORT: String(metricsPort), HOST: '127.0.0.1' });
    signer = await provisionMerchant(service);
    subject = await provisionMerchant(service);
  });
  afterAll(async () => {
    await proxied?.stop();
    await service?.stop();
    await db?.drop();
  });

  /** A console session of the administrator, so that the console's routes answer as to a signed-in browser. */
  async function consoleSession(base: string): Promise<Record<string, string>> {
    const response = await fetch(`${base}/console/session`, {
      method: 'POST',
      headers: { 'x-console': '1' },
      body: JSON.stringify({ token: TEST_ENV.ADMIN_TOKEN }),
    });
    const body = (await response.json()) as { data: { csrf_token: string } };
    return { cookie: (response.headers.get('set-cookie') ?? '').split(';')[0], 'x-console': '1', 'x-csrf-token': body.data.csrf_token };
  }

  /**
   * Each registered route with each of its methods (HEAD with every GET, OPTIONS on every path), as the
   * surface's own client would send it: signed for the merchant API, with the admin's token for the back
   * office, with a session for the console. Bodies are a JSON array, which every route that reads a body
   * refuses, so that probing changes nothing; the merchant API's get `{}`, which its routes read without
   * writing anything.
   */
  async function probeEveryRoute(target: RunningService, extraHeaders: Record<string, string>): Promise<Probe[]> {
    const session = await consoleSession(target.url);
    const values: Record<string, string> = {
      merchant_id: subject.merchantId,
      sku_id: 'mlbb-86',
      product_id: 'mlbb',
      file: 'console.css',
      path: 'v1/topup/submit',
    };
    const routes = registeredRoutes(target.app);
    const requests = new Map<string, { method: string; path: string }>();
    for (const { method, pattern } of routes) {
      const path = concretePath(pattern, (name) => values[name] ?? `no-such-${name}`);
      for (const m of method === 'GET' ? ['GET', 'HEAD', 'OPTIONS'] : [method, 'OPTIONS']) requests.set(`${m} ${path}`, { method: m, path });
    }
    const probes: Probe[] = [];
    for (const { method, path } of requests.values()) {
      const bodyless = method === 'GET' || method === 'HEAD';
      if (path.startsWith('/api/')) {
        const reply = await signedFetch(target, signer, { path, method, headers: extraHeaders });
        probes.push({ method, path, status: reply.status, headers: reply.headers });
        continue;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
      if (path.startsWith('/admin/')) headers.authorization = `Bearer ${TEST_ENV.ADMIN_TOKEN}`;
      if (path.startsWith('/console')) Object.assign(headers, session);
      const response = await fetch(`${target.url}${path}`, { method, headers, body: bodyless ? undefined : '[]' });
      await response.arrayBuffer();
      probes.push({ method, path, status: response.status, headers: response.headers });
    }
    return probes;
  }

  async function problemsAndProbes(target: RunningService, extraHeaders: Record<string, string>, hsts = false) {
    const probes = await probeEveryRoute(target, extraHeaders);
    const problems = probes.flatMap(({ method, path, status, headers }) => securityHeaderProblems(`${method} ${path} -> ${status}`, path, headers, { hsts }));
    return { probes, problems };
  }

  it('every registered route, with each of its methods, replies with them, whatever its status', async () => {
    const routes = registeredRoutes(service.app).map((r) => `${r.method} ${r.pattern}`);
    // The listing is the router's own: a broken listing must not pass by probing nothing.
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /api/v2/topup/submit',
        'POST /api/v2/balance',
        'GET /admin/v1/wallets/:merchant_id/statement',
        'POST /admin/v1/staff',
        'GET /console',
        'GET /console/assets/:file',
        'DELETE /console/session',
        'GET /docs',
        'GET /docs/merchant-api.json',
        'GET /metrics',
        'GET /health',
        'GET /health/ready',
      ]),
    );
    expect(routes.filter((r) => r.includes(' /admin/v1/')).length).toBeGreaterThan(40);

    const probes = await problemsAndProbes(service, {});
    expect(probes.problems).toEqual([]);
    // Among them the replies that carry money, orders, staff data and pages, not only refusals.
    const statusOf = (key: string) => probes.probes.find((p) => `${p.method} ${p.path}` === key)?.status;
    expect({
      balance: statusOf('POST /api/v2/balance'),
      products: statusOf('POST /api/v2/products'),
      statement: statusOf(`GET /admin/v1/wallets/${subject.merchantId}/statement`),
      staff: statusOf('GET /admin/v1/staff'),
      orders: statusOf('GET /admin/v1/orders'),
      session: statusOf('GET /console/session'),
      console: statusOf('GET /console'),
      script: statusOf('GET /console/assets/console.css'),
      docs: statusOf('GET /docs'),
      document: statusOf('GET /docs/back-office.json'),
      metrics: statusOf('GET /metrics'),
      ready: statusOf('GET /health/ready'),
    }).toEqual({
      balance: 200,
      products: 200,
      statement: 200,
      staff: 200,
      orders: 200,
      session: 200,
      console: 200,
      script: 200,
      docs: 200,
      document: 200,
      metrics: 200,
      ready: 200,
    });
    expect(new Set(probes.probes.map((p) => Math.floor(p.status / 100)))).toEqual(new Set([2, 4]));
  });

  it("the edge's own replies: no such route, API v1, wrong method, a query string, too large a body", async () => {
    const cases: [string, string, number, RequestInit?][] = [
      ['GET', '/no-such-route', 404],
      ['POST', '/admin/v1/no-such-route', 404],
      ['GET', '/console/no-such-page', 404],
      ['GET', '/docs/no-such-document.json', 404],
      ['POST', '/api/v1/topup/submit', 404],
      ['GET', '/api/v2/balance', 405],
      ['POST', '/api/v2/balance?x=1', 400],
      ['POST', '/api/v2/topup/submit', 413, { body: 'x'.repeat(65 * 1024) }],
      ['GET', '/admin/v1/orders', 401, { headers: {} }],
    ];
    const problems: string[] = [];
    for (const [method, path, status, init] of cases) {
      const response = await fetch(`${service.url}${path}`, { method, ...init });
      await response.arrayBuffer();
      expect({ method, path, status: response.status }).toEqual({ method, path, status });
      problems.push(...securityHeaderProblems(`${method} ${path} -> ${status}`, path, response.headers, { hsts: false }));
    }
    expect(problems).toEqual([]);
  });

  it('the refusals written before any route runs: malformed HTTP, headers too large, no Host, a request that never arrives', async () => {
    // The path whose surface's policy applies: none ('/', the API's, the strictest) where no request line was read.
    const cases: [string, number, string, string][] = [
      ['not HTTP at all', 400, '/', 'hello\r\n\r\n'],
      ['a 16 KiB header', 431, '/', `GET /console HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(16 * 1024)}\r\n\r\n`],
      ['a bad chunk size after the headers', 400, '/', 'POST /api/v2/balance HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
      ['headers that stop halfway', 408, '/', 'GET /docs HTTP/1.1\r\nHost: x\r\nX-Forwarded-Pr'],
      // Parsed, then refused by the edge before the router: the request's own surface.
      ['no Host header in HTTP/1.1', 400, '/console', 'GET /console HTTP/1.1\r\n\r\n'],
      ['no Host header in HTTP/1.1, to the API', 400, '/api/v2/balance', 'POST /api/v2/balance HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}'],
    ];
    const problems: string[] = [];
    for (const [name, status, path, payload] of cases) {
      const reply = await rawExchange(service.url, payload, { waitMs: HEADERS_TIMEOUT_MS + 5000 });
      expect({ name, status: reply.status, body: JSON.parse(reply.body) }).toEqual({ name, status, body: expect.objectContaining({ success: false }) });
      problems.push(...securityHeaderProblems(name, path, reply.headers, { hsts: false }));
    }
    expect(problems).toEqual([]);
  });

  it("keeps the console's Content-Security-Policy as strict as it was, /docs' as strict but for Swagger UI's data: icons, and JSON replies' stricter still", async () => {
    const cspOf = async (path: string) => (await fetch(`${service.url}${path}`)).headers.get('content-security-policy');
    for (const path of ['/console', '/console/assets/console.js', '/console/assets/console.css', '/favicon.ico', '/console/session']) {
      expect({ path, csp: parseCsp(await cspOf(path)) }).toEqual({ path, csp: parseCsp(CONSOLE_CSP) });
    }
    for (const path of ['/docs', '/docs/', '/docs/assets/docs.css'])
      expect({ path, csp: parseCsp(await cspOf(path)) }).toEqual({ path, csp: parseCsp(DOCS_CSP) });
    for (const path of ['/docs/merchant-api.json', '/health', '/admin/v1/status']) {
      expect({ path, csp: parseCsp(await cspOf(path)) }).toEqual({ path, csp: parseCsp(API_CSP) });
    }
  });

  describe('Strict-Transport-Security', () => {
    const hstsOf = async (base: string, path: string, headers: Record<string, string>) =>
      (await fetch(`${base}${path}`, { headers })).headers.get('strict-transport-security');

    it('only when a proxy TRUST_PROXY counts says the request came over TLS', async () => {
      expect(await hstsOf(proxied.url, '/health', { 'x-forwarded-proto': 'https' })).toBe('max-age=31536000');
      // The last entry is the trusted proxy's; what a client wrote before it proves nothing.
      expect(await hstsOf(proxied.url, '/health', { 'x-forwarded-proto': 'http, https' })).toBe('max-age=31536000');
      expect(await hstsOf(proxied.url, '/health', { 'x-forwarded-proto': 'https, http' })).toBeNull();
      expect(await hstsOf(proxied.url, '/health', { 'x-forwarded-proto': 'http' })).toBeNull();
      expect(await hstsOf(proxied.url, '/health', {})).toBeNull();
      // Without a trusted proxy, a client's own X-Forwarded-Proto is not believed.
      expect(await hstsOf(service.url, '/health', { 'x-forwarded-proto': 'https' })).toBeNull();
    });

    it('on every route behind the proxy over TLS, and on none of them over plain HTTP', async () => {
      const overTls = await problemsAndProbes(proxied, { 'x-forwarded-proto': 'https' }, true);
      expect(overTls.problems).toEqual([]);
      const plain = await problemsAndProbes(proxied, { 'x-forwarded-proto': 'http' }, false);
      expect(plain.problems).toEqual([]);
    });

    it('never on a refusal of bytes that never became a request: there is nothing to tell TLS by', async () => {
      const reply = await rawExchange(proxied.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Forwarded-Proto: https\r\nX-Big: ${'a'.repeat(16 * 1024)}\r\n\r\n`);
      expect(reply.status).toBe(431);
      expect(securityHeaderProblems('431', '/', reply.headers, { hsts: false })).toEqual([]);
    });

    it('the metrics listener of METRICS_PORT sets the same headers', async () => {
      const base = `http://127.0.0.1:${metricsPort}`;
      const problems: string[] = [];
      for (const [path, status, headers, hsts] of [
        ['/metrics', 200, {}, false],
        ['/metrics', 200, { 'x-forwarded-proto': 'https' }, true],
        ['/no-such-route', 404, {}, false],
      ] as const) {
        const response = await fetch(`${base}${path}`, { headers });
        await response.arrayBuffer();
        expect({ path, status: response.status }).toEqual({ path, status });
        problems.push(...securityHeaderProblems(`${path} -> ${status}`, path, response.headers, { hsts }));
      }
      expect(problems).toEqual([]);
    });
  });
});
