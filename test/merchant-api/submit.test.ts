import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { checkEventInvariants } from '../support/invariants';
import { RunningService, serviceOnFreshDatabase, TEST_ENV } from '../support/service';
import { ORDER_KEYS } from '../support/expectations';
import { rawExchange } from '../support/raw-http';

describe('POST /api/v2/topup/submit', () => {
  let service: RunningService;
  let merchant: TestMerchant;
  let teardown: () => Promise<void>;
  let seq = 0;
  const valid = (overrides: Record<string, unknown> = {}) => ({
    out_trade_no: `S-${++seq}`,
    sku_id: 'mlbb-86',
    account_id: '12345678',
    account_fields: { server_id: '2001' },
    ...overrides,
  });
  const submit = (body: unknown, m = merchant) =>
    signedFetch(service, m, { path: '/api/v2/topup/submit', body: typeof body === 'string' ? body : JSON.stringify(body) });
  const balance = async (m = merchant) => (await signedFetch(service, m, { path: '/api/v2/balance' })).body.data;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
    await service.pool.query(`insert into skus (sku_id, product_id, name, on_shelf, updated_by) values ('retired', 'mlbb', 'Old', false, 't')`);
    await service.pool.query(`insert into skus (sku_id, product_id, name, route, updated_by) values ('unroutable', 'mlbb', 'No route', null, 't')`);
    await service.pool.query(`insert into skus (sku_id, product_id, name, updated_by) values ('unpriced', 'mlbb', 'No price', 't')`);
    await service.pool.query(
      `insert into merchant_prices (merchant_id, sku_id, price, updated_by) values ($1, 'retired', 100, 't'), ($1, 'unroutable', 100, 't')`,
      [merchant.merchantId],
    );
  });
  afterAll(async () => {
    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    await teardown();
  });

  it('answers in JSON with the exact length and no ETag, refusals too: a POST is never a conditional request', async () => {
    const body = valid();
    for (const expected of [202, 200]) {
      const reply = await submit(body);
      expect(reply.status).toBe(expected);
      expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(reply.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(reply.body)));
      expect(reply.headers.get('etag')).toBeNull();
      expect(reply.headers.get('x-request-id')).toBeTruthy();
    }
    // So does a refusal: an error is never a conditional GET's answer.
    const refused = await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body: JSON.stringify(valid()), signature: '0'.repeat(64) });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(refused.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(refused.body)));
    expect(refused.headers.get('etag')).toBeNull();
    // A GET still goes through Express: its ETag answers a conditional repeat with 304.
    const url = `${service.url}/admin/v1/merchants/${merchant.merchantId}`;
    const authorization = `Bearer ${TEST_ENV.ADMIN_TOKEN}`;
    const first = await fetch(url, { headers: { authorization } });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"/);
    // Over a plain request: fetch adds Cache-Control: no-cache to a conditional one, which Express then never answers with 304.
    const { host, pathname } = new URL(url);
    const repeat = await rawExchange(
      url,
      `GET ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authorization}\r\nIf-None-Match: ${etag}\r\nConnection: close\r\n\r\n`,
    );
    expect(repeat.status).toBe(304);
  });

  it('202 ACCEPTED: the order, funds frozen at the merchant price', async () => {
    const before = await balance();
    const reply = await submit(valid({ out_trade_no: 'first.order:1' }));
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ success: true, code: 'ACCEPTED' });
    const order = reply.body.data;
    expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
    expect(order).toMatchObject({
      order_no: expect.stringMatching(/^T[0-9A-Z]{26}$/),
      out_trade_no: 'first.order:1',
      status: 'processing',
      sku_id: 'mlbb-86',
      amount: '1.20',
      currency: 'USD',
      account_id: '12345678',
      account_fields: { server_id: '2001' },
      fail_code: null,
      fail_reason: null,
      completed_at: null,
    });
    expect(order.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    const after = await balance();
    expect(after.balance).toBe(before.balance);
    expect(Number(after.frozen_balance) - Number(before.frozen_balance)).toBeCloseTo(1.2, 5);
  });

  it('200 DUPLICATE for the same target in any key order, with the same order', async () => {
    const body = valid({ account_fields: { server_id: '7' } });
    const first = await submit(body);
    const again = await submit(`{"account_fields":{"server_id":"7"},"account_id":"12345678","sku_id":"mlbb-86","out_trade_no":"${body.out_trade_no}"}`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, code: 'DUPLICATE' });
    expect(again.body.data).toEqual(first.body.data);
  });

  it.each([
    ['another account', { account_id: '999' }],
    ['another SKU', { sku_id: 'plain-10', account_fields: {} }],
    ['another field value', { account_fields: { server_id: '2002' } }],
  ])('409 OUT_TRADE_NO_CONFLICT for %s', async (_, change) => {
    const body = valid();
    await submit(body);
    const reply = await submit({ ...body, ...change });
    expect(reply.status).toBe(409);
    expect(reply.body).toMatchObject({ success: false, code: 'OUT_TRADE_NO_CONFLICT' });
  });

  it('402 INSUFFICIENT_BALANCE creates no order; the out_trade_no may be submitted again', async () => {
    const poor = await provisionMerchant(service, { deposit: 100n });
    const body = valid();
    const refused = await submit(body, poor);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    const query = await signedFetch(service, poor, { path: '/api/v2/topup/query', body: JSON.stringify({ out_trade_no: body.out_trade_no }) });
    expect(query.status).toBe(404);
    expect((await balance(poor)).frozen_balance).toBe('0.00');

    await service.pool.query(`update merchant_prices set price = 90 where merchant_id = $1 and sku_id = 'mlbb-86'`, [poor.merchantId]);
    const retried = await submit({ ...body, account_id: 'another' }, poor);
    expect(retried.status).toBe(202);
    expect(retried.body.data).toMatchObject({ out_trade_no: body.out_trade_no, amount: '0.90', account_id: 'another' });
  });

  describe('validation, in the contract order', () => {
    it.each<[string, unknown, number, string, string]>([
      ['no out_trade_no', { ...valid(), out_trade_no: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'out_trade_no'],
      ['no sku_id', { ...valid(), sku_id: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'sku_id'],
      ['no account_id', { ...valid(), account_id: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'account_id'],
      ['no account_fields', { ...valid(), account_fields: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'account_fields'],
      ['null sku_id', valid({ sku_id: null }), 400, 'MISSING_REQUIRED_FIELD', 'sku_id'],
      ['a required account field missing', valid({ account_fields: {} }), 400, 'MISSING_REQUIRED_FIELD', 'account_fields.server_id'],
      ['out_trade_no a number', valid({ out_trade_no: 5 }), 422, 'VALIDATION_FAILED', 'out_trade_no'],
      ['out_trade_no of 65 characters', valid({ out_trade_no: 'a'.repeat(65) }), 422, 'VALIDATION_FAILED', 'out_trade_no'],
      ['out_trade_no with a space', valid({ out_trade_no: 'a b' }), 422, 'VALIDATION_FAILED', 'out_trade_no'],
      ['out_trade_no empty', valid({ out_trade_no: '' }), 422, 'VALIDATION_FAILED', 'out_trade_no'],
      ['sku_id an object', valid({ sku_id: {} }), 422, 'VALIDATION_FAILED', 'sku_id'],
      ['account_id of 65 characters', valid({ account_id: '1'.repeat(65) }), 422, 'VALIDATION_FAILED', 'account_id'],
      ['account_id with a control character', valid({ account_id: '12\u000734' }), 422, 'VALIDATION_FAILED', 'account_id'],
      ['account_id with NUL', valid({ account_id: '12\u0000' }), 422, 'VALIDATION_FAILED', 'account_id'],
      ['account_id a number', valid({ account_id: 12345678 }), 422, 'VALIDATION_FAILED', 'account_id'],
      ['account_fields an array', valid({ account_fields: ['2001'] }), 422, 'VALIDATION_FAILED', 'account_fields'],
      ['an account field a number', valid({ account_fields: { server_id: 2001 } }), 422, 'VALIDATION_FAILED', 'account_fields.server_id'],
      ['an account field null', valid({ account_fields: { server_id: null } }), 422, 'VALIDATION_FAILED', 'account_fields.server_id'],
      ['an account field empty', valid({ account_fields: { server_id: '' } }), 422, 'VALIDATION_FAILED', 'account_fields.server_id'],
      ['an account field of 129 characters', valid({ account_fields: { server_id: '1'.repeat(129) } }), 422, 'VALIDATION_FAILED', 'account_fields.server_id'],
      ['an account field an object', valid({ account_fields: { server_id: { id: '1' } } }), 422, 'VALIDATION_FAILED', 'account_fields.server_id'],
      [
        'a wrong account field the SKU does not define: the wrong type first',
        valid({ account_fields: { server_id: '1', zone: 2 } }),
        422,
        'VALIDATION_FAILED',
        'account_fields.zone',
      ],
      [
        'account_fields of 33 values',
        valid({ account_fields: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`f${i}`, 'v'])) }),
        422,
        'VALIDATION_FAILED',
        'account_fields',
      ],
      ['an unknown top-level field', valid({ amount: '0.01' }), 422, 'VALIDATION_FAILED', 'amount'],
      [
        'an account field the SKU does not define',
        valid({ account_fields: { server_id: '1', zone: '2' } }),
        400,
        'INVALID_ACCOUNT_FIELD',
        'account_fields.zone',
      ],
      ['an unknown SKU', valid({ sku_id: 'nope' }), 422, 'SKU_NOT_FOUND', 'sku_id'],
      ['a SKU without an upstream route', valid({ sku_id: 'unroutable', account_fields: {} }), 400, 'ROUTE_UNAVAILABLE', 'sku_id'],
      ['a SKU off shelf', valid({ sku_id: 'retired', account_fields: {} }), 422, 'SKU_OFF_SHELF', 'sku_id'],
      ['a SKU without a price for this merchant', valid({ sku_id: 'unpriced', account_fields: {} }), 422, 'SKU_OFF_SHELF', 'sku_id'],
    ])('%s: %i %s', async (_, body, status, code, field) => {
      const before = await balance();
      const reply = await submit(body);
      expect(reply.status).toBe(status);
      expect(reply.body).toEqual({ success: false, code, message: expect.any(String), field });
      expect(await balance()).toEqual(before);
    });

    it('a wrong account field: the message names it and says what it must be', async () => {
      const cases: [unknown, string, string][] = [
        [{ server_id: 2001 }, 'account_fields.server_id', 'account_fields.server_id must be a string of 1-128 printable characters'],
        [['2001'], 'account_fields', 'account_fields must be an object of strings'],
        [Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`f${i}`, 'v'])), 'account_fields', 'account_fields must hold at most 32 values'],
      ];
      for (const [accountFields, field, message] of cases) {
        const reply = await submit(valid({ account_fields: accountFields }));
        expect({ field, status: reply.status, body: reply.body }).toEqual({
          field,
          status: 422,
          body: { success: false, code: 'VALIDATION_FAILED', message, field },
        });
      }
    });

    it('a replay after the SKU went off shelf still returns the order', async () => {
      await service.pool.query(`insert into skus (sku_id, product_id, name, updated_by) values ('fading', 'mlbb', 'Fading', 't')`);
      await service.pool.query(`insert into merchant_prices (merchant_id, sku_id, price, updated_by) values ($1, 'fading', 50, 't')`, [merchant.merchantId]);
      const body = valid({ sku_id: 'fading', account_fields: {} });
      expect((await submit(body)).status).toBe(202);
      await service.pool.query(`update skus set on_shelf = false where sku_id = 'fading'`);
      const replay = await submit(body);
      expect(replay.status).toBe(200);
      expect(replay.body).toMatchObject({ code: 'DUPLICATE', data: { amount: '0.50' } });
    });
  });

  describe('concurrent submits of one out_trade_no', () => {
    it('same target: exactly one 202, the rest 200 DUPLICATE with the same order_no; money moves once', async () => {
      const m = await provisionMerchant(service);
      const body = valid();
      const replies = await Promise.all(Array.from({ length: 30 }, () => submit(body, m)));
      expect(replies.filter((r) => r.status === 202)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 200 && r.body.code === 'DUPLICATE')).toHaveLength(29);
      expect(new Set(replies.map((r) => r.body.data.order_no)).size).toBe(1);
      expect(await balance(m)).toMatchObject({ balance: '100.00', frozen_balance: '1.20', available_balance: '98.80' });
    });

    it('different targets: one wins with 202, the others get 409; money moves once', async () => {
      const m = await provisionMerchant(service);
      const outTradeNo = `race-${seq++}`;
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => submit(valid({ out_trade_no: outTradeNo, account_id: `acct-${i}` }), m)));
      expect(replies.filter((r) => r.status === 202)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 409 && r.body.code === 'OUT_TRADE_NO_CONFLICT')).toHaveLength(19);
      expect(await balance(m)).toMatchObject({ frozen_balance: '1.20' });
    });

    it('on a wallet with funds for 10 of 40 orders: exactly 10 accepted over HTTP', async () => {
      const m = await provisionMerchant(service, { deposit: 1200n });
      const replies = await Promise.all(Array.from({ length: 40 }, () => submit(valid(), m)));
      expect(replies.filter((r) => r.status === 202)).toHaveLength(10);
      expect(replies.filter((r) => r.status === 402)).toHaveLength(30);
      expect(await balance(m)).toMatchObject({ balance: '12.00', frozen_balance: '12.00', available_balance: '0.00' });
    });
  });
});
