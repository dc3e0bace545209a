import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { MerchantClient } from '../../src/merchant-client/merchant-client';
import { adminClient } from '../back-office/admin-client';
import { FULFILMENT_ENV_EVERY_ORDER_ENDS } from '../support/fulfilment';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * The merchant's whole journey with the TypeScript client the docs give
 * merchants, against the real service: provisioned through the back office,
 * fulfilled by the simulator over HTTP.
 */
describe('the merchant client against the running service', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let client: MerchantClient;
  let apiKey: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV_EVERY_ORDER_ENDS, UPSTREAM_URL: simulator.url });
    const admin = adminClient(service.url);
    const merchant = await admin.createMerchant({ name: 'Client Co' });
    expect((await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' })).status).toBe(200);
    expect(
      (
        await admin('PUT', '/admin/v1/skus/mlbb-86', {
          product_id: 'mlbb',
          name: '86 Diamonds',
          required_account_fields: ['server_id'],
          supports_account_check: true,
          on_shelf: true,
        })
      ).status,
    ).toBe(200);
    expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchant_id}/prices/mlbb-86`, { price: '1.20' })).status).toBe(200);
    expect((await admin('POST', `/admin/v1/merchants/${merchant.merchant_id}/deposits`, { amount: '10.00', reference: 'wire-1' })).status).toBe(201);
    apiKey = merchant.api_key;
    client = new MerchantClient({ baseUrl: service.url, apiKey, appSecret: merchant.app_secret });
  });
  afterAll(async () => {
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  it('lists products, submits, polls to success, and reads the balance', async () => {
    const products = await client.products();
    expect(products.body).toMatchObject({
      success: true,
      data: { products: [{ product_id: 'mlbb', skus: [{ sku_id: 'mlbb-86', price: '1.20', required_account_fields: ['server_id'] }] }] },
    });

    const submitted = await client.submit({ out_trade_no: 'CL-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '7' } });
    expect(submitted.status).toBe(202);
    if (!submitted.body.success) throw new Error(submitted.body.code);
    const orderNo = submitted.body.data.order_no;

    const again = await client.submit({ out_trade_no: 'CL-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '7' } });
    expect(again.body).toMatchObject({ success: true, code: 'DUPLICATE', data: { order_no: orderNo } });

    let status = 'processing';
    for (let i = 0; i < 100 && status === 'processing'; i++) {
      const polled = await client.query({ order_no: orderNo });
      if (polled.body.success) status = polled.body.data.status;
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(status).toBe('success');
    expect((await client.balance()).body).toEqual({
      success: true,
      code: 'OK',
      data: { currency: 'USD', balance: '8.80', frozen_balance: '0.00', available_balance: '8.80' },
    });
  });

  it('gets the contract codes back as values, never as exceptions', async () => {
    const conflict = await client.submit({ out_trade_no: 'CL-1', sku_id: 'mlbb-86', account_id: 'other', account_fields: { server_id: '7' } });
    expect(conflict).toMatchObject({ status: 409, body: { success: false, code: 'OUT_TRADE_NO_CONFLICT' } });
    const missing = await client.submit({ out_trade_no: 'CL-2', sku_id: 'mlbb-86', account_id: '1', account_fields: {} });
    expect(missing.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'account_fields.server_id' });
    const broke = await client.submit({ out_trade_no: 'CL-3', sku_id: 'mlbb-86', account_id: '1', account_fields: { server_id: '1' } });
    expect(broke.status).toBe(202);
    const unknown = await client.query({ out_trade_no: 'never' });
    expect(unknown).toMatchObject({ status: 404, body: { code: 'ORDER_NOT_FOUND' } });
    const wrongSecret = new MerchantClient({ baseUrl: service.url, apiKey, appSecret: 'f'.repeat(64) });
    expect(await wrongSecret.balance()).toMatchObject({ status: 401, body: { success: false, code: 'INVALID_SIGNATURE' } });
  });

  it('checks its own signing with verify-signature', async () => {
    const check = await client.verifySignature({ hello: 'wörld' });
    expect(check.body).toMatchObject({ success: true, data: { signature_matches: true, timestamp_within_tolerance: true } });
    if (check.body.success) expect(check.body.data.string_to_sign_lines[3]).toBe('{"hello":"wörld"}');
  });
});
