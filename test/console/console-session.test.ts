import { adminClient, failure } from '../back-office/admin-client';
import { RunningService, startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { CONSOLE_CSP, parseCsp } from '../support/security-headers';

/**
 * The console's sign-in, session cookie and CSRF rules at the HTTP level
 * (the browser suite shows them through pages): what a script on another
 * site, or a stolen cookie, could and could not do.
 */
describe('console sessions: sign-in, cookie, CSRF, and the page headers', () => {
  let db: TestDatabase;
  let service: RunningService;
  let proxied: RunningService;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db);
    // A second instance behind one proxy hop, as TRUST_PROXY=1 says: TLS ends at the proxy.
    proxied = await startService(db, { TRUST_PROXY: '1' });
    admin = adminClient(service.url);
  });
  afterAll(async () => {
    await proxied?.stop();
    await service?.stop();
    await db?.drop();
  });

  async function signIn(token: string, headers: Record<string, string> = {}, base = service.url) {
    const response = await fetch(`${base}/console/session`, { method: 'POST', headers: { 'x-console': '1', ...headers }, body: JSON.stringify({ token }) });

    const body = (await response.json()) as any;
    const setCookie = response.headers.get('set-cookie') ?? '';
    return { status: response.status, body, setCookie, cookie: setCookie.split(';')[0] };
  }

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${service.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });

    return { status: response.status, body: (await response.json()) as any };
  };

  it('turns a staff token into an HttpOnly, SameSite=Strict session cookie and a CSRF token, and never echoes the token', async () => {
    const staff = await admin.createStaff('auditor', 'Aldo');
    const signedIn = await signIn(staff.token);
    expect(signedIn.status).toBe(201);
    expect(signedIn.body.data).toEqual({ staff_id: staff.staff_id, name: 'Aldo', role: 'auditor', csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(signedIn.setCookie).toMatch(/^topup_console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    expect(signedIn.setCookie).not.toContain(staff.token);
    expect(JSON.stringify(signedIn.body)).not.toContain(staff.token);
    // The cookie alone reads; the session says who it is.
    expect((await call('GET', '/admin/v1/orders', { cookie: signedIn.cookie })).status).toBe(200);
    expect((await call('GET', '/console/session', { cookie: signedIn.cookie })).body.data).toEqual(signedIn.body.data);
    // Only the hash of the cookie is stored.
    const { rows } = await db.pool.query('select id_hash from console_sessions where staff_id = $1', [staff.staff_id]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(signedIn.cookie.split('=')[1]);
  });

  it('marks the cookie Secure when TRUST_PROXY counts a proxy that says the browser came over TLS', async () => {
    expect((await signIn(TEST_ENV.ADMIN_TOKEN, { 'x-forwarded-proto': 'https' }, proxied.url)).setCookie).toMatch(/; Secure$/);
    expect((await signIn(TEST_ENV.ADMIN_TOKEN, { 'x-forwarded-proto': 'http' }, proxied.url)).setCookie).not.toContain('Secure');
    // Without a trusted proxy, a client's own X-Forwarded-Proto proves nothing.
    expect((await signIn(TEST_ENV.ADMIN_TOKEN, { 'x-forwarded-proto': 'https' })).setCookie).not.toContain('Secure');
  });

  it('needs the CSRF token for every change made with the cookie, whatever the role', async () => {
    const { cookie, body } = await signIn(TEST_ENV.ADMIN_TOKEN);
    const csrf = body.data.csrf_token as string;
    expect(await call('POST', '/admin/v1/staff', { cookie }, { name: 'Eve', role: 'admin' })).toEqual({ status: 403, body: failure('CSRF_TOKEN_INVALID') });
    expect(await call('POST', '/admin/v1/staff', { cookie, 'x-csrf-token': `${csrf.slice(1)}x` }, { name: 'Eve', role: 'admin' })).toEqual({
      status: 403,
      body: failure('CSRF_TOKEN_INVALID'),
    });
    expect((await call('POST', '/admin/v1/staff', { cookie, 'x-csrf-token': csrf }, { name: 'Eve', role: 'admin' })).status).toBe(201);
    // Another session's token is no good either.
    const other = await signIn(TEST_ENV.ADMIN_TOKEN);
    expect((await call('PUT', '/admin/v1/products/p', { cookie, 'x-csrf-token': other.body.data.csrf_token }, { name: 'P' })).body).toEqual(
      failure('CSRF_TOKEN_INVALID'),
    );
    expect((await db.pool.query(`select count(*)::int as n from staff where name = 'Eve'`)).rows[0].n).toBe(1);
  });

  it('refuses a sign-in that does not come from the console page, or with a token that is not one', async () => {
    const staff = await admin.createStaff('reconciler');
    const crossSite = await fetch(`${service.url}/console/session`, {
      method: 'POST',
      headers: { 'x-console': '1', origin: 'https://evil.example' },
      body: JSON.stringify({ token: staff.token }),
    });
    expect({ status: crossSite.status, body: await crossSite.json(), cookie: crossSite.headers.get('set-cookie') }).toEqual({
      status: 403,
      body: failure('CSRF_TOKEN_INVALID'),
      cookie: null,
    });
    const formPost = await fetch(`${service.url}/console/session`, { method: 'POST', body: JSON.stringify({ token: staff.token }) });
    expect(formPost.status).toBe(403);
    expect((await signIn('not-a-token')).body).toEqual(failure('UNAUTHORIZED'));
    expect((await signIn('')).status).toBe(401);
    const missing = await fetch(`${service.url}/console/session`, { method: 'POST', headers: { 'x-console': '1' }, body: '{}' });
    expect(await missing.json()).toEqual(failure('MISSING_REQUIRED_FIELD', 'token'));
    const broken = await fetch(`${service.url}/console/session`, { method: 'POST', headers: { 'x-console': '1' }, body: '{"token":' });
    expect(broken.status).toBe(400);
  });

  it('ends the session on sign-out (which needs the CSRF token), on disabling the member and on rotating their token', async () => {
    const staff = await admin.createStaff('reconciler', 'Rita');
    const first = await signIn(staff.token);
    expect((await call('DELETE', '/console/session', { cookie: first.cookie })).status).toBe(403);
    const out = await fetch(`${service.url}/console/session`, {
      method: 'DELETE',
      headers: { cookie: first.cookie, 'x-csrf-token': first.body.data.csrf_token },
    });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^topup_console=; .*Max-Age=0/);
    expect((await call('GET', '/admin/v1/orders', { cookie: first.cookie })).body).toEqual(failure('UNAUTHORIZED'));

    const second = await signIn(staff.token);
    await admin('POST', `/admin/v1/staff/${staff.staff_id}/token`);
    expect((await call('GET', '/admin/v1/orders', { cookie: second.cookie })).status).toBe(401);

    const rotated = await admin('POST', `/admin/v1/staff/${staff.staff_id}/token`);
    const third = await signIn(rotated.body.data.token);
    expect((await call('GET', '/admin/v1/orders', { cookie: third.cookie })).status).toBe(200);
    await admin('POST', `/admin/v1/staff/${staff.staff_id}/disable`);
    expect((await call('GET', '/admin/v1/orders', { cookie: third.cookie })).status).toBe(401);
    expect((await call('GET', '/console/session', { cookie: third.cookie })).body).toEqual(failure('UNAUTHORIZED'));
  });

  it('answers null to a browser that never signed in, and refuses and clears the cookie of a session that ended', async () => {
    const nobody = await fetch(`${service.url}/console/session`);
    expect({ status: nobody.status, body: await nobody.json() }).toEqual({ status: 200, body: { success: true, code: 'OK', data: null } });
    const staff = await admin.createStaff('auditor', 'Ada');
    const { cookie } = await signIn(staff.token);
    await admin('POST', `/admin/v1/staff/${staff.staff_id}/disable`);
    const ended = await fetch(`${service.url}/console/session`, { headers: { cookie } });
    expect({ status: ended.status, body: await ended.json() }).toEqual({ status: 401, body: failure('UNAUTHORIZED') });
    expect(ended.headers.get('set-cookie')).toMatch(/^topup_console=; .*Max-Age=0/);
  });

  it('ends the built-in administrator’s sessions when ADMIN_TOKEN changes', async () => {
    const { cookie } = await signIn(TEST_ENV.ADMIN_TOKEN);
    expect((await call('GET', '/admin/v1/status', { cookie })).status).toBe(200);
    const restarted = await startService(db, { ADMIN_TOKEN: 'a-new-admin-token-9876543210' });
    try {
      const reply = await fetch(`${restarted.url}/admin/v1/status`, { headers: { cookie } });
      expect({ status: reply.status, body: await reply.json() }).toEqual({ status: 401, body: failure('UNAUTHORIZED') });
    } finally {
      await restarted.stop();
    }
  });

  it('serves the page, its two files and its icon with a strict Content-Security-Policy, and nothing else under /console/assets', async () => {
    for (const path of ['/console', '/console/assets/console.js', '/console/assets/console.css']) {
      const response = await fetch(`${service.url}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(parseCsp(response.headers.get('content-security-policy'))).toEqual(parseCsp(CONSOLE_CSP));
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
    const page = await (await fetch(`${service.url}/console`)).text();
    // Nothing from outside the service: every URL in the page is a path on it.
    expect(page.match(/(?:src|href)="([^"]+)"/g)).toEqual(['href="/console/assets/console.css"', 'src="/console/assets/console.js"']);
    expect(page).not.toMatch(/<script>|style=/);
    // The icon browsers ask every origin for, whatever the page links.
    for (const path of ['/favicon.ico', '/console/assets/favicon.ico']) {
      const response = await fetch(`${service.url}${path}`);
      expect({ path, status: response.status, type: response.headers.get('content-type') }).toEqual({ path, status: 200, type: 'image/x-icon' });
    }
    for (const path of ['/console/assets/index.html', '/console/assets/..%2Fconsole.controller.ts', '/console/assets/nothing.js']) {
      const response = await fetch(`${service.url}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
    }
  });
});
