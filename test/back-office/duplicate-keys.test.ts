import { walletAmounts } from '../support/fixtures';
import { serviceOnFreshDatabase } from '../support/service';
import { adminClient, call, failure } from './admin-client';

/**
 * JSON.parse keeps the last of two equal keys, so a body could say two things
 * and the service would silently act on one. The back office refuses such a
 * body as the merchant API does: 400 INVALID_JSON, and nothing changes.
 */
describe('back office: a key twice in one object', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  let merchantId: string;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
    merchantId = (await admin.createMerchant()).merchant_id;
  });
  afterAll(() => env?.teardown());

  const send = (method: string, path: string, raw: string) => call(env.service.url, method, path, undefined, { raw });
  const invalidJson = (reply: { status: number; body: unknown }) =>
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 400, body: failure('INVALID_JSON') });

  it('a deposit with two amounts is 400 INVALID_JSON and deposits nothing', async () => {
    invalidJson(await send('POST', `/admin/v1/merchants/${merchantId}/deposits`, '{"amount":"1.00","amount":"500.00","reference":"r"}'));
    expect(await walletAmounts(env.service.store, merchantId)).toEqual([0n, 0n, 0n]);
    // The reference was not used up either: the deposit may be sent again, correctly.
    expect((await admin('POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount: '1.00', reference: 'r' })).status).toBe(201);
    expect(await walletAmounts(env.service.store, merchantId)).toEqual([100n, 0n, 100n]);
  });

  it('a PATCH with two statuses is 400 INVALID_JSON and leaves the merchant as it was', async () => {
    const before = (await admin('GET', `/admin/v1/merchants/${merchantId}`)).body.data;
    invalidJson(await send('PATCH', `/admin/v1/merchants/${merchantId}`, '{"status":"suspended","status":"active"}'));
    invalidJson(await send('PATCH', `/admin/v1/merchants/${merchantId}`, '{"status":"active","status":"suspended"}'));
    expect((await admin('GET', `/admin/v1/merchants/${merchantId}`)).body.data).toEqual(before);
  });

  it.each([
    ['at the top, apart', 'POST', '/admin/v1/merchants', '{"name":"A","currency":"USD","name":"B"}'],
    ['one level down', 'POST', '/admin/v1/merchants', '{"name":"A","x":{"k":1,"k":2}}'],
    ['inside an array', 'PUT', '/admin/v1/products/p-dup', '{"name":"A","x":[1,{"k":{"j":1,"j":1}}]}'],
    ['with the same value', 'POST', '/admin/v1/staff', '{"name":"A","role":"auditor","role":"auditor"}'],
    ['spelt with an escape', 'POST', '/admin/v1/staff', '{"name":"A","role":"auditor","\\u0072ole":"admin"}'],
    ['on a route that reads no fields', 'POST', '/admin/v1/audit/verify', '{"merchant_id":"a","merchant_id":"b"}'],
  ])('%s: 400 INVALID_JSON, nothing created', async (_name, method, path, raw) => {
    const count = async () =>
      (await env.db.pool.query(`select (select count(*) from merchants) + (select count(*) from staff) + (select count(*) from products) as n`)).rows[0].n;
    const before = await count();
    invalidJson(await send(method, path, raw));
    expect(await count()).toEqual(before);
  });

  it('the same key in two different objects is fine', async () => {
    const reply = await send('POST', '/admin/v1/merchants', '{"name":"A","x":{"name":"B"}}');
    // Parsed and validated: the unknown field is what is wrong with it, not the JSON.
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 422, body: failure('VALIDATION_FAILED', 'x') });
  });
});
