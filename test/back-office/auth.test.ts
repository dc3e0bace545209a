import { createHash } from 'node:crypto';
import { serviceOnFreshDatabase } from '../support/service';
import { ADMIN, adminClient, call, failure } from './admin-client';

/** Every provisioning route, with a body that would succeed for an admin. */
function provisioningRoutes(merchantId: string): Array<[method: string, path: string, body: unknown]> {
  return [
    ['POST', '/admin/v1/staff', { name: 'Eve', role: 'admin' }],
    ['POST', '/admin/v1/merchants', { name: 'Shop' }],
    ['GET', '/admin/v1/staff', undefined],
    ['GET', '/admin/v1/products', undefined],
    ['GET', '/admin/v1/skus', undefined],
    ['GET', `/admin/v1/merchants/${merchantId}/prices`, undefined],
    ['GET', '/admin/v1/status', undefined],
    ['PATCH', `/admin/v1/merchants/${merchantId}`, { status: 'suspended' }],
    ['POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount: '1.00', reference: 'r-1' }],
    ['PUT', '/admin/v1/products/p-1', { name: 'Product' }],
    ['PUT', '/admin/v1/skus/s-1', { product_id: 'p-1', name: 'SKU', required_account_fields: [], supports_account_check: false, on_shelf: true }],
    ['PUT', `/admin/v1/merchants/${merchantId}/prices/s-1`, { price: '1.20' }],
  ];
}

describe('back office: authentication and roles', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  let merchantId: string;
  let routes: ReturnType<typeof provisioningRoutes>;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
    merchantId = (await admin.createMerchant()).merchant_id;
    routes = provisioningRoutes(merchantId);
  });
  afterAll(() => env?.teardown());

  const badCredentials: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['an empty header', { authorization: '' }],
    ['another scheme', { authorization: `Basic ${Buffer.from(`admin:${ADMIN}`).toString('base64')}` }],
    ['the token without a scheme', { authorization: ADMIN }],
    ['Bearer without a token', { authorization: 'Bearer ' }],
    ['a token with characters outside b64token', { authorization: `Bearer ${ADMIN} extra` }],
    ['an unknown token', { authorization: 'Bearer not-a-staff-token-0000000000' }],
    ['the admin token with one character changed', { authorization: `Bearer ${ADMIN.slice(0, -1)}X` }],
    ['a prefix of the admin token', { authorization: `Bearer ${ADMIN.slice(0, 10)}` }],
  ];

  it.each(badCredentials)('answers 401 UNAUTHORIZED on every route for %s, and changes nothing', async (_name, headers) => {
    const auditBefore = await env.db.pool.query('select count(*)::int as n from back_office_audit');
    for (const [method, path, body] of routes) {
      const reply = await call(env.service.url, method, path, body, { token: null, headers });
      expect({ route: `${method} ${path}`, status: reply.status, body: reply.body }).toEqual({
        route: `${method} ${path}`,
        status: 401,
        body: failure('UNAUTHORIZED'),
      });
      expect(reply.headers.get('www-authenticate')).toBe('Bearer');
    }
    const auditAfter = await env.db.pool.query('select count(*)::int as n from back_office_audit');
    expect(auditAfter.rows[0].n).toBe(auditBefore.rows[0].n);
  });

  it('answers 401 to the stored hash of a staff token used as a token', async () => {
    const staff = await admin.createStaff('admin');
    const hash = createHash('sha256').update(staff.token).digest();
    for (const encoding of ['base64url', 'hex'] as const) {
      const reply = await call(env.service.url, 'GET', `/admin/v1/merchants/${merchantId}`, undefined, { token: hash.toString(encoding) });
      expect(reply.status).toBe(401);
    }
  });

  it('accepts the scheme name in any case', async () => {
    const reply = await call(env.service.url, 'GET', `/admin/v1/merchants/${merchantId}`, undefined, {
      token: null,
      headers: { authorization: `bearer ${ADMIN}` },
    });
    expect(reply.status).toBe(200);
  });

  it('lets every role read merchants (to find the one a ticket or statement is about), not change them', async () => {
    for (const role of ['reconciler', 'auditor']) {
      const staff = await admin.createStaff(role);
      expect((await call(env.service.url, 'GET', `/admin/v1/merchants/${merchantId}`, undefined, { token: staff.token })).status).toBe(200);
      expect((await call(env.service.url, 'GET', '/admin/v1/merchants', undefined, { token: staff.token })).status).toBe(200);
    }
  });

  it('checks the token before the body: no token and invalid JSON is 401', async () => {
    const reply = await call(env.service.url, 'POST', '/admin/v1/merchants', undefined, { token: null, raw: '{not json' });
    expect(reply.status).toBe(401);
  });

  it.each(['reconciler', 'auditor'])('answers 403 FORBIDDEN to the %s role on every provisioning route, and changes nothing', async (role) => {
    const staff = await admin.createStaff(role);
    expect(staff).toEqual({
      staff_id: expect.stringMatching(/^stf_[0-9a-f]{16}$/),
      name: `${role} person`,
      role,
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const auditBefore = await env.db.pool.query('select count(*)::int as n from back_office_audit');
    for (const [method, path, body] of routes) {
      const reply = await call(env.service.url, method, path, body, { token: staff.token });
      expect({ route: `${method} ${path}`, status: reply.status, body: reply.body }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        body: failure('FORBIDDEN'),
      });
    }
    const auditAfter = await env.db.pool.query('select count(*)::int as n from back_office_audit');
    expect(auditAfter.rows[0].n).toBe(auditBefore.rows[0].n);
    expect((await admin('GET', `/admin/v1/merchants/${merchantId}`)).body.data.status).toBe('active');
  });

  it('lets a staff admin created through POST /staff call every provisioning route', async () => {
    const staff = await admin.createStaff('admin', 'Deputy');
    for (const [method, path, body] of routes) {
      const reply = await call(env.service.url, method, path, body, { token: staff.token });
      expect({ route: `${method} ${path}`, status: reply.status }).toEqual({ route: `${method} ${path}`, status: method === 'POST' ? 201 : 200 });
    }
  });

  it('stores only the SHA-256 of a staff token, and audits the creation without it', async () => {
    const staff = await admin.createStaff('auditor', 'Ann Auditor');
    const { rows } = await env.db.pool.query('select staff_id, name, role, token_hash, created_by from staff where staff_id = $1', [staff.staff_id]);
    expect(rows).toEqual([
      { staff_id: staff.staff_id, name: 'Ann Auditor', role: 'auditor', token_hash: createHash('sha256').update(staff.token).digest(), created_by: 'admin' },
    ]);
    const audit = await env.db.pool.query('select staff_id, action, details from back_office_audit where target = $1', [`staff:${staff.staff_id}`]);
    expect(audit.rows).toEqual([{ staff_id: 'admin', action: 'staff.created', details: { name: 'Ann Auditor', role: 'auditor' } }]);
    expect(JSON.stringify(audit.rows)).not.toContain(staff.token);
  });

  it('answers 404 NOT_FOUND for an unknown route under /admin', async () => {
    for (const [method, path] of [
      ['GET', '/admin/v1/nothing-here'],
      ['POST', '/admin/v2/merchants'],
      ['DELETE', `/admin/v1/merchants/${merchantId}`],
      ['PUT', '/admin/v1/staff'],
    ]) {
      const reply = await admin(method, path);
      expect({ path, status: reply.status, body: reply.body }).toEqual({ path, status: 404, body: failure('NOT_FOUND') });
    }
  });
});
